"""Freed memory handed back to the operating system between the stages of a long run.

Three allocators serve a training run: DuckDB's jemalloc, pyarrow's pool (mimalloc) and the C
library's malloc (NumPy, the Cython kernels' vectors). Each keeps what a stage freed for its own
later use, so without help the peak RSS of a run is the sum of every allocator's own peak rather than
the largest set of data alive at once. `returning_freed_memory(con)` turns on jemalloc's background
purging for the run (DuckDB's `allocator_background_threads`, restored afterwards);
`release_freed_memory()` purges jemalloc's freed pages at once (background purging waits seconds, and
a query's freed pages would be resident through the Cython stage after it), empties pyarrow's pool
of unused pages and trims malloc's heap (glibc only). Neither changes a result.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa

_LIBC = ctypes.util.find_library("c")
_MALLOC_TRIM = getattr(ctypes.CDLL(_LIBC), "malloc_trim", None) if _LIBC else None


def _duckdb_mallctl():
    """DuckDB's `mallctl` (None where its library has no jemalloc, as on Windows and macOS)."""
    native = getattr(duckdb, "_duckdb", None) or getattr(duckdb, "duckdb", None)  # 2.x, 1.x
    library = getattr(native, "__file__", None)
    return getattr(ctypes.CDLL(library), "duckdb_je_mallctl", None) if library else None


_JE_MALLCTL = _duckdb_mallctl()
_PURGE_ALL_ARENAS = b"arena.4096.purge"  # 4096 is jemalloc's MALLCTL_ARENAS_ALL


@contextmanager
def returning_freed_memory(con) -> Iterator[None]:
    """DuckDB's jemalloc purges freed pages in the background while the block runs."""
    before = con.execute("SELECT current_setting('allocator_background_threads')").fetchall()[0][0]
    con.execute("SET allocator_background_threads = true")
    try:
        yield
    finally:
        con.execute(f"SET allocator_background_threads = {'true' if before else 'false'}")


def release_freed_memory() -> None:
    """Pages DuckDB's jemalloc, pyarrow's pool and the C library's malloc hold free, back to the
    operating system."""
    if _JE_MALLCTL is not None:
        _JE_MALLCTL(_PURGE_ALL_ARENAS, None, None, None, ctypes.c_size_t(0))
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
