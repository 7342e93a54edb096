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
    try:
        con.create_function(name, fn, params, returns, type="arrow", null_handling="special",
                            side_effects=side_effects)
    except duckdb.CatalogException as e:
        if "already exists" not in str(e):
            raise
        from sqltok.errors import SqltokError

        # DuckDB keeps Python functions per database instance but ties them to the connection that
        # made them: borrowing them from another connection would crash once that one closes.
        raise SqltokError("sqltok's functions are registered on another open connection to this database "
                          "in this process: use that connection (or close it first)") from None
    mine.add(name)


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Every sqltok UDF on `con`."""
    from . import candidates, encode, normalize, pairs, prepare, pretokenize

    pretokenize.register(con)
    encode.register(con)
    candidates.register(con)
    normalize.register(con)
    pairs.register(con)
    prepare.register(con)
