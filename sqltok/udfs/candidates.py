"""`sqltok_candidates(tokenizer, text)` in SQL: each document's supermerge candidates as lists of
token ids (INTEGER[][]), found by the Cython extractor with the named phase-1 model;
`sqltok_candidate_keys(tokenizer, text)` gives them as keys (BLOB[]: each candidate's ids as int32
bytes, which DuckDB groups several times faster than lists), and `sqltok_candidate_ids(key)` turns a
key back into its ids. Superword training counts them with `sqltok_candidate_counts(tokenizer,
text)`: each batch's distinct keys with their counts, on the batch's first row (STRUCT(unit BLOB,
n BIGINT)[]; only their sum over rows means anything, as `sqltok_pretoken_counts`'s). Right after
phase 1, training counts them with `sqltok_pretoken_candidate_counts(run, text)`: the units looked
up by pretoken in what that phase-1 run (registered by name) made of each."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.bpe.candidate_counts import phase1_units
from sqltok.bpe.candidates import candidate_counts, candidate_ids, candidates_arrow, pretoken_candidate_counts
from sqltok.named_tokenizers import named_tokenizers

from .by_model import by_model
from .define import define
from .pieces import PIECE_BYTES

CANDIDATES = pa.list_(pa.list_(pa.int32()))
KEYS = pa.list_(pa.binary())
COUNTS = pa.list_(pa.struct([("unit", pa.large_binary()), ("n", pa.int64())]))


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar, integer = duckdb.sqltype("VARCHAR"), duckdb.sqltype("INTEGER")

    def candidates(names, texts):
        return by_model(names, texts, lambda n, t: candidates_arrow(reg.get(n), t).cast(CANDIDATES), CANDIDATES)

    def keys(names, texts):
        return by_model(names, texts, lambda n, t: candidates_arrow(reg.get(n), t, keys=True).cast(KEYS), KEYS)

    def counts(names, texts):
        return by_model(names, texts, lambda n, t: candidate_counts(reg.get(n), t, PIECE_BYTES), COUNTS)

    def pretoken_counts(names, texts):
        return by_model(names, texts, lambda n, t: pretoken_candidate_counts(phase1_units(n), t, PIECE_BYTES), COUNTS)

    def ids(keys):
        return candidate_ids(keys).cast(pa.list_(pa.int32()))

    define(con, "sqltok_candidates", candidates, [varchar, varchar], duckdb.list_type(duckdb.list_type(integer)))
    define(con, "sqltok_candidate_keys", keys, [varchar, varchar], duckdb.list_type(duckdb.sqltype("BLOB")))
    weighted = duckdb.list_type(duckdb.struct_type({"unit": duckdb.sqltype("BLOB"), "n": duckdb.sqltype("BIGINT")}))
    # Their rows are not the texts': only their sum means anything (see sqltok_pretoken_counts).
    define(con, "sqltok_candidate_counts", counts, [varchar, varchar], weighted, side_effects=True)
    define(con, "sqltok_pretoken_candidate_counts", pretoken_counts, [varchar, varchar], weighted, side_effects=True)
    define(con, "sqltok_candidate_ids", ids, [duckdb.sqltype("BLOB")], duckdb.list_type(integer))
