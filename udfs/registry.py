"""Registering Arrow UDFs on a DuckDB connection, idempotently."""
from __future__ import annotations

from typing import Callable

import duckdb


def define(con: duckdb.DuckDBPyConnection, name: str, fn: Callable, params: list, returns) -> None:
    """(Re)define `name` as an Arrow UDF on `con`: NULL handling is the function's own."""
    try:
        con.remove_function(name)
    except (duckdb.InvalidInputException, duckdb.CatalogException):
        pass
    con.create_function(name, fn, params, returns, type="arrow", null_handling="special",
                        side_effects=False)


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Every sqltok UDF on `con`."""
    from . import pretokenize

    pretokenize.register(con)
