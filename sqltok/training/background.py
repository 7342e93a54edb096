"""A training stage of Cython code (the GIL released) on a thread of its own, while the caller's
thread has DuckDB write what is already known."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable


class Background:
    """`with Background(fn, *args) as job: ...; job.result()` runs `fn(*args, cancel=event)` on a
    thread of its own; `fn` stops with an error once `event` is set, which leaving the block before
    the result does (an error or Ctrl-C in the caller's thread). `seconds`: how long `fn` ran."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.cancel = threading.Event()
        self.seconds = 0.0
        self._out: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)

    def _run(self, fn: Callable[..., Any], args: tuple) -> None:
        t0 = time.perf_counter()
        try:
            self._out = fn(*args, cancel=self.cancel)
        except BaseException as e:  # handed to the caller by result()
            self._error = e
        self.seconds = time.perf_counter() - t0

    def __enter__(self) -> "Background":
        self._thread.start()
        return self

    def result(self) -> Any:
        """`fn`'s result, once it has run; its error, raised here."""
        while self._thread.is_alive():
            self._thread.join(0.1)  # short waits, so that Ctrl-C reaches the main thread
        if self._error is not None:
            raise self._error
        return self._out

    def __exit__(self, *exc) -> None:
        if self._thread.is_alive():
            self.cancel.set()
