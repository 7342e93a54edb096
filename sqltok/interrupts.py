"""Ctrl-C during a call that runs queries. DuckDB reports it in three ways: a KeyboardInterrupt
when it lands in Python, an interrupted query (RuntimeError "Query interrupted", or
`duckdb.InterruptException`), or an `InvalidInputException` when it lands inside a Python UDF.
sqltok's public calls that run queries raise KeyboardInterrupt for all three, DuckDB's error as its
cause, as Python code expects of Ctrl-C (the database is left as it was, as for any failed run)."""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

import duckdb

F = TypeVar("F", bound=Callable)

_IN_UDF = "while executing the UDF: KeyboardInterrupt"


def is_interrupt(e: BaseException) -> bool:
    """Whether `e` is Ctrl-C as DuckDB reports it."""
    if isinstance(e, (KeyboardInterrupt, duckdb.InterruptException)):
        return True
    if isinstance(e, duckdb.Error) and _IN_UDF in str(e):
        return True
    return isinstance(e, RuntimeError) and str(e).strip().endswith("Query interrupted")


def interruptible(fn: F) -> F:
    """`fn`, raising KeyboardInterrupt for Ctrl-C however DuckDB reported it."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (duckdb.Error, RuntimeError) as e:
            if is_interrupt(e):
                raise KeyboardInterrupt(str(e)) from e
            raise
    return call  # type: ignore[return-value]
