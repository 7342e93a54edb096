"""`pretokenize` in SQL: a VARCHAR column in, a VARCHAR[] column out, split by the Cython pretokenizer."""
from __future__ import annotations

import duckdb

from sqltok.pretokenizer._pretokenize import pretokenize_arrow

from .define import define


def _script_aware(texts):
    return pretokenize_arrow(texts, True)


def _simple(texts):
    return pretokenize_arrow(texts, False)


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Define `sqltok_pretokenize_script` and `sqltok_pretokenize_simple` (the `pretokenize` macro
    of `sql/macros.sql` chooses between them)."""
    varchar = duckdb.sqltype("VARCHAR")
    varchar_list = duckdb.list_type(varchar)
    define(con, "sqltok_pretokenize_script", _script_aware, [varchar], varchar_list)
    define(con, "sqltok_pretokenize_simple", _simple, [varchar], varchar_list)
