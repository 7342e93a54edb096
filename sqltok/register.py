"""`register(con)`: sqltok's SQL functions and table macros on a DuckDB connection."""
from __future__ import annotations

import duckdb

from sqltok.sql_files import run_script
from sqltok.store import ensure_schema


def register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Install the UDFs (`pretokenize`, ...) and the table macros (`sqltok_merges`, ...) on `con`.

    Idempotent. Macros are TEMP: they live with the connection, the model tables in the database.
    """
    from sqltok.udfs import register_udfs

    register_udfs(con)
    ensure_schema(con)
    run_script(con, "macros")
    run_script(con, "normalize")
    run_script(con, "judge_macros")
    return con
