"""A shard read on a worker as a `Source`, so that it goes through the same readers and checks as a
whole file in one process: its Parquet rows as DuckDB's own scan of them (a filter on
`file_row_number`, which skips the other row groups and pages: 4x less time than reading them with
pyarrow), or, in a file with a column of that name, its row groups read by pyarrow; its byte range
as a file of its lines."""
from __future__ import annotations

import dataclasses
import os
import tempfile
import uuid
from contextlib import contextmanager
from typing import BinaryIO, Iterator

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from sqltok.cluster.shards import Shard, has_row_number_column
from sqltok.corpus.sources import Source, quote_literal

_CHUNK = 1 << 20


@contextmanager
def shard_source(shard: Shard, template: Source, con: duckdb.DuckDBPyConnection) -> Iterator[Source]:
    """`template` (a file source) narrowed to `shard`, read with `con`: Parquet rows as a query of
    them (or of their row groups, registered in `con` until leaving), a byte range copied to a file
    in the worker's own temporary folder (removed on leaving), a whole file as it is."""
    if shard.kind == "file":
        yield dataclasses.replace(template, path=shard.path)
    elif shard.kind == "rows" and has_row_number_column(pq.read_schema(shard.path).names):
        name = f"sqltok_shard_{uuid.uuid4().hex}"
        con.register(name, row_groups(shard))
        try:
            yield dataclasses.replace(template, path=None, sql=f"SELECT * FROM {name}")
        finally:
            con.unregister(name)
    elif shard.kind == "rows":
        yield dataclasses.replace(template, path=None, sql=rows_query(shard))
    else:
        path = os.path.join(tempfile.gettempdir(), f"sqltok-shard-{uuid.uuid4().hex}{os.path.splitext(shard.path)[1]}")
        try:
            with open(shard.path, "rb") as f, open(path, "wb") as out:
                start, stop = line_start(f, shard.start), line_start(f, shard.stop)
                f.seek(start)
                while start < stop:
                    chunk = f.read(min(_CHUNK, stop - start))
                    if not chunk:
                        break
                    out.write(chunk)
                    start += len(chunk)
            yield dataclasses.replace(template, path=path)
        finally:
            if os.path.exists(path):
                os.unlink(path)


def rows_query(shard: Shard) -> str:
    """The shard's rows, in file order, every column of the file (which has no column named
    file_row_number: see `row_groups`)."""
    return (f"SELECT * EXCLUDE (file_row_number) "
            f"FROM read_parquet({quote_literal(shard.path)}, file_row_number = true) "
            f"WHERE file_row_number >= {shard.start} AND file_row_number < {shard.stop}")


def row_groups(shard: Shard) -> pa.Table:
    """The shard's rows read by pyarrow: the row groups that hold them (the shard's own, as a file
    with a column named file_row_number is cut), each read once."""
    f = pq.ParquetFile(shard.path)
    groups, first, row = [], shard.start, 0
    for i in range(f.num_row_groups):
        rows = f.metadata.row_group(i).num_rows
        if row < shard.stop and row + rows > shard.start:
            first = min(first, row)
            groups.append(i)
        row += rows
    return f.read_row_groups(groups).slice(shard.start - first, shard.stop - shard.start)


def line_start(f: BinaryIO, pos: int) -> int:
    """The first offset at or after `pos` where a line begins (the file's end if none does): the
    lines that begin in [a, b) are the bytes [line_start(a), line_start(b))."""
    if pos == 0:
        return 0
    f.seek(pos - 1)
    offset = pos - 1
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return offset
        i = chunk.find(b"\n")
        if i >= 0:
            return offset + i + 1
        offset += len(chunk)
