"""A shard read on a worker as a `Source`, so that it goes through the same readers and checks as a
whole file in one process: its row groups as an Arrow view, its byte range as a file of its lines."""
from __future__ import annotations

import dataclasses
import os
import tempfile
import uuid
from contextlib import contextmanager
from typing import BinaryIO, Iterator

import duckdb
import pyarrow.parquet as pq

from sqltok.cluster.shards import Shard
from sqltok.corpus.sources import Source

_CHUNK = 1 << 20


@contextmanager
def shard_source(con: duckdb.DuckDBPyConnection, shard: Shard, template: Source,
                 columns: list[str] | None = None) -> Iterator[Source]:
    """`template` (a file source) narrowed to `shard`: row groups are read with pyarrow (`columns`,
    default the text column) and registered as a view, a byte range is copied to a file in the
    worker's own temporary folder (removed on leaving), a whole file is read as it is."""
    if shard.kind == "file":
        yield dataclasses.replace(template, path=shard.path)
    elif shard.kind == "row_groups":
        view = f"__sqltok_shard_{uuid.uuid4().hex}"
        table = pq.ParquetFile(shard.path).read_row_groups(range(shard.start, shard.stop),
                                                           columns=columns or [template.text_key])
        con.register(view, table)
        try:
            yield dataclasses.replace(template, path=None, table=view)
        finally:
            con.unregister(view)
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
