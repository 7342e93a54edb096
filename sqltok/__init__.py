"""sqltok: train and run tokenizers inside DuckDB.

    import duckdb, sqltok
    con = duckdb.connect("work.duckdb")
    sqltok.register(con)
    sqltok.train_bpe(con, "SELECT text FROM docs", vocab_size=32768, model="my_bpe")
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
from .tokenizer import Tokenizer
from .wordpiece import WordPieceTokenizer
from .train import TrainReport, train_bpe

__all__ = [
    "CorpusError", "Merge", "Model", "ModelExistsError", "ModelNotFoundError", "Source", "SqltokError",
    "TrainReport", "drop_model", "export_model", "import_model", "load_model", "model_names",
    "pretokenize", "register", "Tokenizer", "train_bpe",
    "bert_normalize", "normalize", "WordPieceTokenizer",
]
__version__ = "0.1.0"
