"""sqltok: train and run tokenizers inside DuckDB.

    import duckdb, sqltok
    con = duckdb.connect("work.duckdb")
    sqltok.register(con)
    sqltok.train_bpe(con, "SELECT text FROM docs", vocab_size=32768, model="my_bpe")
    sqltok.train_superword(con, "SELECT text FROM docs", 32768, "my_bl", method="boundless")
    sqltok.train_wordpiece(con, "SELECT text FROM docs", 30522, "my_wp")    # BertWordPieceTokenizer's
    con.sql("SELECT * FROM sqltok_merges('my_bpe') LIMIT 10")
    con.sql("SELECT encode('my_bpe', text) FROM docs")
    tok = sqltok.Tokenizer.load("o200k_base.tiktoken")
    con.sql("SELECT detect_language(text), mask_pii(text) FROM docs")
    sqltok.prepare(con, [sqltok.Source(table="docs")], "prepared/", sqltok.PrepareSettings(detect_language=True))
"""
from importlib.metadata import PackageNotFoundError, version

from sqltok.pretokenizer._pretokenize import pretokenize
from sqltok.corpus.dedup import exact_duplicates, near_duplicates
from sqltok.corpus.language import detect_language
from sqltok.corpus.pii import find_pii, mask_pii
from sqltok.corpus.prepare import PrepareSettings, prepare
from sqltok.corpus.sources import Source
from sqltok.errors import CorpusError, ModelExistsError, ModelNotFoundError, SqltokError, UnknownTokenError
from sqltok.bpe.model import Merge, Model
from sqltok.model_files import export_model, import_model
from sqltok.normalizers import bert_normalize, normalize
from sqltok.register import register
from sqltok.store import drop_model, load_model, model_names
from sqltok.bpe.superword import SuperwordReport, train_superword
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.token_offsets import EncodedText
from sqltok.tokenizer import Tokenizer
from sqltok.wordpiece.tokenizer import WordPieceTokenizer
from sqltok.sentencepiece.tokenizer import SentencePieceTokenizer
from sqltok.sentencepiece.hf_tokenizer import HfSentencePieceTokenizer
from sqltok.bpe.train import TrainReport, train_bpe
from sqltok.wordpiece.train import WordPieceReport, train_wordpiece
from sqltok.wordpiece.train_settings import WordPieceSettings

__all__ = [
    "BPETokenizer", "CorpusError", "EncodedText", "Merge", "Model", "ModelExistsError", "ModelNotFoundError",
    "PrepareSettings", "SentencePieceTokenizer", "Source", "SqltokError", "SuperwordReport", "Tokenizer", "TrainReport", "UnknownTokenError",
    "WordPieceReport", "WordPieceSettings", "WordPieceTokenizer", "bert_normalize", "detect_language",
    "drop_model", "exact_duplicates", "export_model", "find_pii", "import_model", "load_model", "mask_pii",
    "model_names", "near_duplicates", "normalize", "prepare", "pretokenize", "register", "train_bpe",
    "train_superword", "train_wordpiece",
]

try:
    __version__ = version("sqltok")
except PackageNotFoundError:  # a checkout that was built in place without being installed
    __version__ = "unknown"
