"""`sqltok_bert_words(text, clean_text, handle_chinese_chars, strip_accents, lowercase)` in SQL: the
words WordPiece training counts (BERT normalizer, then BERT pre-tokenizer), as VARCHAR[]."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.wordpiece._words import bert_words_arrow

from .define import define
from .normalize import by_bert_switches


def _bert_words(texts: pa.Array, clean: pa.Array, chinese: pa.Array, strip: pa.Array, lower: pa.Array) -> pa.Array:
    return by_bert_switches(texts, (clean, chinese, strip, lower), bert_words_arrow, pa.list_(pa.string()),
                            "sqltok_bert_words")


def register(con: duckdb.DuckDBPyConnection) -> None:
    varchar, boolean = duckdb.sqltype("VARCHAR"), duckdb.sqltype("BOOLEAN")
    define(con, "sqltok_bert_words", _bert_words, [varchar, boolean, boolean, boolean, boolean],
           duckdb.list_type(varchar))
