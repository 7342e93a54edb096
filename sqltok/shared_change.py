"""A change to process-wide state (a setting, the garbage collector, an allocator) made for the length
of a block that may run on several threads at once: the first block to start makes the change, the
last to end undoes it, with what the first one found."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class SharedChange(Generic[T]):
    """`make(*args)` changes the state and returns what was there before; `undo(before, *args)` puts
    it back. `args` are those of the block that makes or undoes the change (a connection, say)."""

    def __init__(self, make: Callable[..., T], undo: Callable[..., None]) -> None:
        self._make, self._undo = make, undo
        self._lock = threading.Lock()
        self._blocks = 0
        self._before: T | None = None

    @contextmanager
    def held(self, *args) -> Iterator[None]:
        with self._lock:
            if self._blocks == 0:
                self._before = self._make(*args)
            self._blocks += 1
        try:
            yield
        finally:
            with self._lock:
                self._blocks -= 1
                if self._blocks == 0:
                    self._undo(self._before, *args)
