"""`sqltok_candidates(tokenizer, text)` in SQL: each document's supermerge candidates as lists of
token ids (INTEGER[][]), found by the Cython extractor with the named phase-1 model. Superword
training counts them as `sqltok_candidate_keys(tokenizer, text)` (BLOB[]: each candidate's ids as
int32 bytes, which DuckDB groups several times faster than lists) and turns each distinct key back
into its ids with `sqltok_candidate_ids(key)`. Right after phase 1, training finds the keys with
`sqltok_pretoken_candidate_keys(run, text)`: the units looked up by pretoken in what that phase-1 run
(registered by name) made of each."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.bpe.candidate_counts import phase1_units
from sqltok.bpe.candidates import candidate_ids, candidates_arrow, pretoken_candidates
from sqltok.named_tokenizers import named_tokenizers

from .by_model import by_model
from .define import define

CANDIDATES = pa.list_(pa.list_(pa.int32()))
KEYS = pa.list_(pa.binary())


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar, integer = duckdb.sqltype("VARCHAR"), duckdb.sqltype("INTEGER")

    def candidates(names, texts):
        return by_model(names, texts, lambda n, t: candidates_arrow(reg.get(n), t).cast(CANDIDATES), CANDIDATES)

    def keys(names, texts):
        return by_model(names, texts, lambda n, t: candidates_arrow(reg.get(n), t, keys=True).cast(KEYS), KEYS)

    def pretoken_keys(names, texts):
        return by_model(names, texts, lambda n, t: pretoken_candidates(phase1_units(n), t, keys=True).cast(KEYS), KEYS)

    def ids(keys):
        return candidate_ids(keys).cast(pa.list_(pa.int32()))

    define(con, "sqltok_candidates", candidates, [varchar, varchar], duckdb.list_type(duckdb.list_type(integer)))
    define(con, "sqltok_candidate_keys", keys, [varchar, varchar], duckdb.list_type(duckdb.sqltype("BLOB")))
    define(con, "sqltok_pretoken_candidate_keys", pretoken_keys, [varchar, varchar],
           duckdb.list_type(duckdb.sqltype("BLOB")))
    define(con, "sqltok_candidate_ids", ids, [duckdb.sqltype("BLOB")], duckdb.list_type(integer))
