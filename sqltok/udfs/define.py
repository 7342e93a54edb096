"""Defining sqltok's Arrow UDFs on a DuckDB database instance, once.

DuckDB keeps a Python function in the instance's catalog, where every connection to the instance
sees it, but lets go of the Python object when the connection that defined it closes: another
connection calling it then would crash the process. sqltok keeps every function it defines alive
for the life of the process instead, so the functions serve all connections to the instance.
"""
from __future__ import annotations

from typing import Callable

import duckdb

_alive: list[Callable] = []


def define(con: duckdb.DuckDBPyConnection, name: str, fn: Callable, params: list, returns,
           side_effects: bool = False) -> None:
    """Define `name` as an Arrow UDF of `con`'s instance (NULL handling is the function's own)."""
    _alive.append(fn)
    try:
        con.create_function(name, fn, params, returns, type="arrow", null_handling="special",
                            side_effects=side_effects)
    except duckdb.CatalogException as e:
        if "already exists" not in str(e):  # an earlier register() that stopped half-way defined it
            raise


def define_instance_key(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """`sqltok_instance()`: which named tokenizers the instance's functions use (defined last, so that
    it is there only when the others are)."""
    fn = lambda: key  # noqa: E731
    _alive.append(fn)
    con.create_function("sqltok_instance", fn, [], duckdb.sqltype("VARCHAR"))
