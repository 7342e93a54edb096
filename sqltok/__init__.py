"""sqltok: train and run tokenizers inside DuckDB.

    import duckdb, sqltok
    con = duckdb.connect("work.duckdb")
    sqltok.register(con)
    sqltok.train_bpe(con, "SELECT text FROM docs", vocab_size=32768, model="my_bpe")
    sqltok.train_superword(con, "SELECT text FROM docs", 32768, "my_bl", method="boundless")
    con.sql("SELECT * FROM sqltok_merges('my_bpe') LIMIT 10")
    con.sql("SELECT encode('my_bpe', text) FROM docs")
    tok = sqltok.Tokenizer.load("o200k_base.tiktoken")
"""
from ._pretokenize import pretokenize
from .corpus import Source
from .errors import CorpusError, ModelExistsError, ModelNotFoundError, SqltokError
from .model import Merge, Model
from .models_io import export_model, import_model
from .normalizers import bert_normalize, normalize
from .register import register
from .store import drop_model, load_model, model_names
from .superword import SuperwordReport, train_superword
from .tokenizer import Tokenizer
from .wordpiece import WordPieceTokenizer
from .train import TrainReport, train_bpe

__all__ = [
    "CorpusError", "Merge", "Model", "ModelExistsError", "ModelNotFoundError", "Source", "SqltokError",
    "TrainReport", "drop_model", "export_model", "import_model", "load_model", "model_names",
    "pretokenize", "register", "SuperwordReport", "Tokenizer", "train_bpe", "train_superword",
    "bert_normalize", "normalize", "WordPieceTokenizer",
]
__version__ = "0.1.0"
