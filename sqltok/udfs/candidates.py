"""`sqltok_candidates(tokenizer, text)` in SQL: each document's supermerge candidates as lists of
token ids (INTEGER[][]), found by the Cython extractor with the named phase-1 model; superword
training counts them."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.bpe.candidates import candidates_arrow
from sqltok.named_tokenizers import named_tokenizers

from .by_model import by_model
from .define import define

CANDIDATES = pa.list_(pa.list_(pa.int32()))


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar, integer = duckdb.sqltype("VARCHAR"), duckdb.sqltype("INTEGER")

    def candidates(names, texts):
        return by_model(names, texts, lambda n, t: candidates_arrow(reg.get(n), t).cast(CANDIDATES), CANDIDATES)

    define(con, "sqltok_candidates", candidates, [varchar, varchar], duckdb.list_type(duckdb.list_type(integer)))
