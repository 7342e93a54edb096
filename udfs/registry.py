"""Registering Arrow UDFs on a DuckDB connection, once each."""
from __future__ import annotations

import weakref
from typing import Callable

import duckdb

# The functions each connection got from us. They are defined once: remove_function would also take
# away a DuckDB built-in of the same name (decode, encode), so nothing is ever redefined.
_defined: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]]" = weakref.WeakKeyDictionary()


def define(con: duckdb.DuckDBPyConnection, name: str, fn: Callable, params: list, returns,
           side_effects: bool = False) -> None:
    """Define `name` as an Arrow UDF on `con` unless it is there already; NULL handling is the
    function's own."""
    mine = _defined.setdefault(con, set())
    if name in mine:
        return
    con.create_function(name, fn, params, returns, type="arrow", null_handling="special",
                        side_effects=side_effects)
    mine.add(name)


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Every sqltok UDF on `con`."""
    from . import encode, pretokenize

    pretokenize.register(con)
    encode.register(con)
