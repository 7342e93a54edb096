"""Small helpers over the DuckDB Python API (whose Arrow method names changed in DuckDB 2.0)."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import pyarrow as pa


def arrow_table(con, query: str, params: list | None = None) -> pa.Table:
    """The result of `query` as one pyarrow Table with contiguous columns."""
    rel = con.sql(query, params=params or None)
    fetch = getattr(rel, "to_arrow_table", None) or rel.arrow
    return fetch().combine_chunks()


def arrow_batches(con, query: str, rows: int) -> pa.RecordBatchReader:
    """The result of `query` as a stream of record batches of about `rows` rows."""
    rel = con.sql(query)
    return (getattr(rel, "to_arrow_reader", None) or rel.fetch_record_batch)(rows)


def column(table: pa.Table, i: int) -> pa.Array:
    """Column `i` of a combined table as one Array (empty tables give an empty Array)."""
    col = table.column(i)
    return col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks) if col.num_chunks else \
        pa.array([], col.type)


@contextmanager
def transaction(con) -> Iterator[None]:
    """BEGIN ... COMMIT, or ROLLBACK when the block raises (KeyboardInterrupt included)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def insert_arrow(con, table: str, model: str, data: pa.Table) -> None:
    """Insert the rows of `data` into `table`, each with its `model` column set to `model`."""
    con.register("__sqltok_rows", data)
    try:
        cols = ", ".join(data.column_names)
        con.execute(f"INSERT INTO {table} (model, {cols}) SELECT ?, {cols} FROM __sqltok_rows", [model])
    finally:
        con.unregister("__sqltok_rows")
