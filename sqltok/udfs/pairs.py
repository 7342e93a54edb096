"""`encode_pair(name, text, pair)` in SQL: a sequence pair as a WordPiece tokenizer's post-processor
puts it ([CLS] text [SEP] pair [SEP]), for cross-encoders and rerankers."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.named_tokenizers import named_tokenizers

from .by_model import by_model
from .encode import IDS
from .define import define


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar = duckdb.sqltype("VARCHAR")

    def run(name: str, both: pa.StructArray) -> pa.Array:
        tok = reg.get(name)
        if not hasattr(tok, "encode_pair_arrow"):
            raise ValueError(f"tokenizer {name!r} has no pair template (encode_pair is for WordPiece models)")
        return tok.encode_pair_arrow(both.field(0), both.field(1))

    def encode_pair(names, texts, pairs):
        texts, pairs = (a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in (texts, pairs))
        both = pa.StructArray.from_arrays([texts, pairs], ["text", "pair"])
        return by_model(names, both, run, IDS)

    define(con, "encode_pair", encode_pair, [varchar, varchar, varchar], duckdb.list_type(duckdb.sqltype("INTEGER")))
