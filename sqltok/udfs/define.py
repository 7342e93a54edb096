"""Defining sqltok's Arrow UDFs on a DuckDB database instance, once.

DuckDB keeps a Python function in the instance's catalog, where every connection to the instance
sees it, but lets go of the Python object when the connection that defined it closes: another
connection calling it then would crash the process. sqltok keeps every function it defines alive
for the life of the process instead, so the functions serve all connections to the instance.
"""
from __future__ import annotations

from collections.abc import Collection
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

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


def one_constant(values: pa.Array, choices: Collection[str], function: str, what: str) -> str:
    """The one value of a UDF's constant argument column, which must be one of `choices` (else a
    ValueError naming `function` and `what` the argument is)."""
    distinct = pc.unique(values).to_pylist()
    if len(distinct) != 1 or distinct[0] not in choices:
        raise ValueError(f"{function}: the {what} must be one constant of {sorted(choices)}")
    return distinct[0]


def define_instance_key(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """`sqltok_instance()`: which named tokenizers the instance's functions use (defined last, so that
    it is there only when the others are)."""
    fn = lambda: key  # noqa: E731
    _alive.append(fn)
    con.create_function("sqltok_instance", fn, [], duckdb.sqltype("VARCHAR"))
