"""`register(con)`: sqltok's SQL functions and table macros on a DuckDB connection."""
from __future__ import annotations

import threading
import weakref

import duckdb

from sqltok.errors import SqltokError
from sqltok.sql_files import run_script
from sqltok.store import ensure_schema
from sqltok.udfs import register_udfs


#: The databases (name and file) each connection has registered on (a stage registers again on its
#: caller's connection).
_registered: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]]" = weakref.WeakKeyDictionary()
#: Held while registering: cursors of one connection registering at once would each define the
#: instance's functions, and all but the first fail.
_registering = threading.RLock()


def register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Install the UDFs (`pretokenize`, ...) and the table macros (`sqltok_merges`, ...) on `con`.

    Idempotent (a second call on the same connection and database returns at once). Macros are
    TEMP: they live with the connection, the model tables in the database (a read-only database is
    used as it is: its models can be read, none written).
    """
    with _registering:
        return _register(con)


def _register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    database = con.execute("SELECT database_name || ':' || coalesce(path, '') FROM duckdb_databases() "
                           "WHERE database_name = current_database()").fetchall()[0][0]
    done = _registered.setdefault(con, set())
    if database in done:
        return con
    register_udfs(con)
    read_only = _read_only(con)
    if not read_only:
        ensure_schema(con)
    run_script(con, "macros")
    run_script(con, "normalize")
    run_script(con, "judge_macros")
    if _has_store(con):  # table macros over the store (a read-only database may have none)
        try:
            run_script(con, "store_macros")
            run_script(con, "judge_store_macros")
        except duckdb.CatalogException as e:
            if not read_only:
                raise
            # `ensure_schema` brings an earlier sqltok's store up to date, which a read-only one cannot be
            raise SqltokError("the model store of this read-only database was written by an earlier sqltok "
                              f"({str(e).splitlines()[0]}): open it once without read_only to bring it up "
                              "to date") from None
    done.add(database)
    return con


def _read_only(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()"
                       ).fetchall()[0][0]


def _has_store(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'sqltok_store' "
                       "AND database_name = current_database()").fetchall()[0][0] > 0
