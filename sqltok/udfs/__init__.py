"""DuckDB functions over Arrow batches: thin wrappers that hand Arrow buffers to the Cython code."""
from __future__ import annotations

import duckdb

from . import candidates, encode, normalize, pairs, pretokenize


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Every sqltok UDF on `con`."""
    pretokenize.register(con)
    encode.register(con)
    candidates.register(con)
    normalize.register(con)
    pairs.register(con)


__all__ = ["register_udfs"]
