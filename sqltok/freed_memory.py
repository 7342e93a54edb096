"""Freed memory handed back to the operating system between the stages of a long run.

Three allocators serve a training run: DuckDB's jemalloc, pyarrow's pool (mimalloc) and the C
library's malloc (NumPy, the Cython kernels' vectors). Each keeps what a stage freed for its own
later use, so without help the peak RSS of a run is the sum of every allocator's own peak rather than
the largest set of data alive at once. `returning_freed_memory(con)` turns on jemalloc's background
purging for the run (DuckDB's `allocator_background_threads`, restored afterwards), has pyarrow
allocate with malloc (`arrow_memory.arrow_on_malloc`), so that Arrow and NumPy reuse each other's
freed memory, and has glibc's malloc map every block of 1 MiB or more on its own, so
that freeing one hands it back at once (glibc's default is 128 KiB, raised as large blocks are freed;
afterwards M_MMAP_THRESHOLD is glibc's default again, without that raising). All three are the
process's, so runs on several threads at once share one such period: the first to start sets it up,
the last to end restores what was before.
`release_freed_memory()` purges jemalloc's freed pages at once (background purging waits a second,
and a query's freed pages would be resident through the Cython stage after it), empties pyarrow's
pool of unused pages and trims malloc's heap (glibc only). None of this changes a result.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from sqltok.arrow_memory import arrow_on_malloc
from sqltok.shared_change import SharedChange

_LIBC = ctypes.util.find_library("c")
_MALLOC_TRIM = getattr(ctypes.CDLL(_LIBC), "malloc_trim", None) if _LIBC else None
_MALLOPT = getattr(ctypes.CDLL(_LIBC), "mallopt", None) if _LIBC else None
M_MMAP_THRESHOLD = -3
RUN_MMAP_THRESHOLD = 1 << 20
DEFAULT_MMAP_THRESHOLD = 128 << 10


def _duckdb_mallctl():
    """DuckDB's `mallctl` (None where its library has no jemalloc, as on Windows and macOS)."""
    native = getattr(duckdb, "_duckdb", None) or getattr(duckdb, "duckdb", None)  # 2.x, 1.x
    library = getattr(native, "__file__", None)
    return getattr(ctypes.CDLL(library), "duckdb_je_mallctl", None) if library else None


_JE_MALLCTL = _duckdb_mallctl()
_PURGE_ALL_ARENAS = b"arena.4096.purge"  # 4096 is jemalloc's MALLCTL_ARENAS_ALL


def _return_freed_memory(con) -> bool:
    before = con.execute("SELECT current_setting('allocator_background_threads')").fetchall()[0][0]
    con.execute("SET allocator_background_threads = true")
    if _MALLOPT is not None:
        _MALLOPT(M_MMAP_THRESHOLD, RUN_MMAP_THRESHOLD)
    return before


def _keep_freed_memory(background, con) -> None:
    if _MALLOPT is not None:
        _MALLOPT(M_MMAP_THRESHOLD, DEFAULT_MMAP_THRESHOLD)
    con.execute(f"SET allocator_background_threads = {'true' if background else 'false'}")


_returning = SharedChange(_return_freed_memory, _keep_freed_memory)


@contextmanager
def returning_freed_memory(con) -> Iterator[None]:
    """While the block runs: DuckDB's jemalloc purges freed pages in the background, pyarrow
    allocates with malloc and malloc maps blocks of 1 MiB or more on their own."""
    with _returning.held(con), arrow_on_malloc():
        yield


def release_freed_memory() -> None:
    """Pages DuckDB's jemalloc, pyarrow's pool and the C library's malloc hold free, back to the
    operating system."""
    if _JE_MALLCTL is not None:
        _JE_MALLCTL(_PURGE_ALL_ARENAS, None, None, None, ctypes.c_size_t(0))
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
