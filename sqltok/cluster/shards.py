"""Shards: the pieces of a file source that become one task each. Parquet files by row ranges (runs of
row groups, a row group larger than a shard cut into parts of equal rows), uncompressed JSONL files
by byte ranges cut at line ends, every other file (compressed JSONL, text) whole. A shard knows the
file's size and modification time, so that outputs keyed by it are reused only while the file is
unchanged."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from glob import glob, has_magic

import pyarrow.parquet as pq

from sqltok.corpus.sources import Source
from sqltok.errors import CorpusError

#: The bytes a shard holds when the caller does not say (a task of about a second of counting).
SHARD_BYTES = 64 * 2**20

#: Uncompressed JSONL files, the ones cut into byte ranges.
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class Shard:
    """One task's part of a file: `kind` "rows" (Parquet rows [start, stop) in file order), "bytes"
    (the lines that begin in bytes [start, stop)) or "file" (all of it, start = stop = 0); `nbytes`
    about what it holds, for the progress bar."""

    path: str
    size: int
    mtime_ns: int
    kind: str
    start: int
    stop: int
    nbytes: int

    @property
    def name(self) -> str:
        """The shard as errors and file names show it."""
        if self.kind == "rows":
            return f"{self.path} (rows {self.start}-{self.stop - 1})"
        if self.kind == "bytes":
            return f"{self.path} (bytes {self.start}-{self.stop})"
        return self.path

    @property
    def label(self) -> str:
        """A file-name-safe suffix telling the shard from the file's other shards ('' when whole)."""
        return "" if self.kind == "file" else f".{'r' if self.kind == 'rows' else 'b'}{self.start}-{self.stop}"

    def identity(self) -> dict:
        """What outputs made from the shard are keyed by: path, part, size and modification time."""
        return asdict(self)


def source_files(source: Source) -> list[str]:
    """The files of a file source, sorted; the source must name files (not a table or a query)."""
    if source.path is None:  # workers cannot see the coordinator's database, and each shard of a
        # query by a hash of its rows would have every worker run (and scan) the whole query
        raise CorpusError("counting or encoding on a cluster reads files: give the source as a path or glob "
                          "(Parquet, JSONL or text files every worker can read), not a table or a query; the "
                          "workers cannot see this database's tables, and sharding a query by row would have every "
                          "worker run all of it. Write the query's documents to files first: COPY (SELECT text ...) "
                          "TO 'shards' (FORMAT parquet, PER_THREAD_OUTPUT), then train on "
                          "Source(path='shards/*.parquet')")
    if source.max_documents is not None:
        raise CorpusError("max_documents takes the first documents in file order, which shards do not have: "
                          "write those documents to a file first")
    source.query()  # the format is known (and plain text has its mode), or this says why not
    paths = sorted(glob(source.path)) if has_magic(source.path) else [source.path]
    files = [os.path.abspath(p) for p in paths if os.path.isfile(p)]
    if not files:
        raise CorpusError(f"no files match {source.path}")
    return files


def shards_of(source: Source, shard_bytes: int = SHARD_BYTES) -> list[Shard]:
    """The shards of a file source, in file order, each of about `shard_bytes` bytes."""
    if shard_bytes < 1:
        raise CorpusError("shard_bytes must be a positive number")
    return [s for path in source_files(source) for s in _file_shards(path, shard_bytes)]


def _file_shards(path: str, shard_bytes: int) -> list[Shard]:
    st = os.stat(path)
    lower = path.lower()
    if lower.endswith(".parquet"):
        return _parquet_shards(path, st, shard_bytes)
    if lower.endswith(JSONL_SUFFIXES) and st.st_size > shard_bytes:
        return [Shard(path, st.st_size, st.st_mtime_ns, "bytes", a, min(a + shard_bytes, st.st_size),
                      min(shard_bytes, st.st_size - a)) for a in range(0, st.st_size, shard_bytes)]
    return [Shard(path, st.st_size, st.st_mtime_ns, "file", 0, 0, st.st_size)]


def has_row_number_column(names: list[str]) -> bool:
    """Whether a Parquet file's columns `names` include one named file_row_number (any case), which
    DuckDB's option of that name (the shards' row filter) clashes with."""
    return "file_row_number" in (name.lower() for name in names)


def _parquet_shards(path: str, st: os.stat_result, shard_bytes: int) -> list[Shard]:
    """Row ranges of about `shard_bytes` bytes each, uncompressed (as a byte range of JSONL is), so that
    a shard is about as much text whatever the file's compression: runs of consecutive row groups, and
    a row group larger than `shard_bytes` cut into parts of equal rows (DuckDB reads the pages of a
    part's rows only), so that a file of few big row groups still gives the workers even tasks. A file
    with a column named file_row_number is cut at row groups only (its shards are read by row group)."""
    try:
        f = pq.ParquetFile(path)
    except (OSError, ValueError) as e:
        raise CorpusError(f"cannot read the shard {path}: {e}") from None
    meta, cut = f.metadata, not has_row_number_column(f.schema_arrow.names)
    groups = [(meta.row_group(i).num_rows, meta.row_group(i).total_byte_size) for i in range(meta.num_row_groups)]
    if len(groups) <= 1 and sum(size for _, size in groups) <= shard_bytes:
        return [Shard(path, st.st_size, st.st_mtime_ns, "file", 0, 0, sum(size for _, size in groups))]
    shards: list[Shard] = []

    def add(start: int, stop: int, nbytes: int) -> None:
        shards.append(Shard(path, st.st_size, st.st_mtime_ns, "rows", start, stop, nbytes))

    first = row = held = 0
    for rows, size in groups:
        if cut and size > shard_bytes and rows > 1:
            if row > first:
                add(first, row, held)
            parts = min(rows, -(-size // shard_bytes))
            for k in range(parts):
                add(row + rows * k // parts, row + rows * (k + 1) // parts, size // parts)
            row += rows
            first, held = row, 0
            continue
        row += rows
        held += size
        if held >= shard_bytes:
            add(first, row, held)
            first, held = row, 0
    if row > first or not shards:
        add(first, row, held)
    return shards
