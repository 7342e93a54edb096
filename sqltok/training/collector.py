"""The cyclic garbage collector paused while a trained model's Python objects are built: hundreds of
thousands of merges, token bytes and counts, which make no cycles, yet each full collection the
allocations trigger would walk all of them (at vocab 131,072, four full collections per run)."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from sqltok.shared_change import SharedChange


def _pause() -> bool:
    was = gc.isenabled()
    gc.disable()
    return was


_paused = SharedChange(_pause, lambda was: gc.enable() if was else None)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the block (nested and concurrent blocks are fine: it resumes, if it
    was running, when the last block ends)."""
    with _paused.held():
        yield
