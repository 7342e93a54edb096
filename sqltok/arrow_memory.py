"""Arrow buffers from the C library's malloc for the length of a training run.

pyarrow's default pool on Linux (mimalloc) hands the pages of freed blocks back to the operating
system within milliseconds and maps fresh ones (huge pages where it can) for the next block. A run
that makes an Arrow batch per DuckDB chunk in a loop (a function's output, a stage's batches) then
pays a page fault and the zeroing of every page, every time. malloc keeps and reuses such blocks: on
en100, BoundlessBPE's candidates stage took 1.02-1.19 s instead of 1.30-1.38 s and the run's system
time fell from 1.3-1.4 s to 0.8-0.95 s (the two pools alternated in one window). The pool is the process's: runs
on several threads at once share one such period, and the pool before is restored after the last.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

from sqltok.shared_change import SharedChange


def _use_malloc() -> pa.MemoryPool:
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    return before


def _restore(before: pa.MemoryPool) -> None:
    pa.set_memory_pool(before)


_on_malloc = SharedChange(_use_malloc, _restore)


@contextmanager
def arrow_on_malloc() -> Iterator[None]:
    """While the block runs, pyarrow allocates with malloc (its system pool)."""
    with _on_malloc.held():
        yield
