"""`pretokenize` in SQL: a VARCHAR column in, a VARCHAR[] column out, split by the Cython pretokenizer;
and `sqltok_pretoken_counts(text, pattern)`, what counting sums: each batch's distinct pretokens with
their counts, on the batch's first row (`_batch_counts`; long texts counted in pieces of about
`PIECE_BYTES`)."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.pretokenizer._batch_counts import batch_pretoken_counts
from sqltok.pretokenizer._pieces import PRETOKEN_CUTS
from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pretokenize_arrow

from .define import define, one_constant
from .pieces import PIECE_BYTES


def _script_aware(texts):
    return pretokenize_arrow(texts, True)


def _simple(texts):
    return pretokenize_arrow(texts, False)


def _with_pattern(texts: pa.Array, names: pa.Array) -> pa.Array:
    return pretokenize_arrow(texts, pattern=PATTERN_IDS[one_constant(names, PATTERN_IDS, "sqltok_pretokenize_with",
                                                                      "pattern")])


def _batch_counts(texts: pa.Array, names: pa.Array) -> pa.Array:
    name = one_constant(names, PATTERN_IDS, "sqltok_pretoken_counts", "pattern") if len(names) else "o200k"
    return batch_pretoken_counts(texts, PATTERN_IDS[name], PIECE_BYTES, *PRETOKEN_CUTS[name])


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Define `sqltok_pretokenize_script` and `sqltok_pretokenize_simple` (the `pretokenize` macro
    of `sql/macros.sql` chooses between them), and `sqltok_pretokenize_with(text, pattern)` for a
    pattern by its `PATTERN_IDS` name ('cl100k', 'llama3', ...)."""
    varchar = duckdb.sqltype("VARCHAR")
    varchar_list = duckdb.list_type(varchar)
    define(con, "sqltok_pretokenize_script", _script_aware, [varchar], varchar_list)
    define(con, "sqltok_pretokenize_simple", _simple, [varchar], varchar_list)
    define(con, "sqltok_pretokenize_with", _with_pattern, [varchar, varchar], varchar_list)
    # Its rows are not the texts': only their sum means anything (side effects: never folded, reordered
    # or computed once for equal texts).
    define(con, "sqltok_pretoken_counts", _batch_counts, [varchar, varchar],
           duckdb.list_type(duckdb.struct_type({"unit": varchar, "n": duckdb.sqltype("BIGINT")})), side_effects=True)
