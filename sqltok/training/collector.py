"""The cyclic garbage collector paused while a trained model's Python objects are built: hundreds of
thousands of merges, token bytes and counts, which make no cycles, yet each full collection the
allocations trigger would walk all of them (at vocab 131,072, four full collections per run)."""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = 0          # blocks inside `collector_paused`, on any thread
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the block (nested and concurrent blocks are fine: it resumes, if it
    was running, when the last block ends)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
