"""`pretokenize` in SQL: a VARCHAR column in, a VARCHAR[] column out, split by the Cython pretokenizer."""
from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pretokenize_arrow

from .define import define


def _script_aware(texts):
    return pretokenize_arrow(texts, True)


def _simple(texts):
    return pretokenize_arrow(texts, False)


def _with_pattern(texts: pa.Array, names: pa.Array) -> pa.Array:
    name = pc.unique(names).to_pylist()
    if len(name) != 1 or name[0] not in PATTERN_IDS:
        raise ValueError(f"sqltok_pretokenize_with: the pattern must be one constant of {sorted(PATTERN_IDS)}")
    return pretokenize_arrow(texts, pattern=PATTERN_IDS[name[0]])


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Define `sqltok_pretokenize_script` and `sqltok_pretokenize_simple` (the `pretokenize` macro
    of `sql/macros.sql` chooses between them), and `sqltok_pretokenize_with(text, pattern)` for a
    pattern by its `PATTERN_IDS` name ('cl100k', 'llama3', ...)."""
    varchar = duckdb.sqltype("VARCHAR")
    varchar_list = duckdb.list_type(varchar)
    define(con, "sqltok_pretokenize_script", _script_aware, [varchar], varchar_list)
    define(con, "sqltok_pretokenize_simple", _simple, [varchar], varchar_list)
    define(con, "sqltok_pretokenize_with", _with_pattern, [varchar, varchar], varchar_list)
