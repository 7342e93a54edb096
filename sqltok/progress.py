"""A one-line progress bar on stderr: done/total, rate and ETA. Quiet unless asked for."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Call `update(done)`; prints at most ten times a second, and a final line on `close()`."""

    def __init__(self, label: str, total: int, unit: str, stream: TextIO | None = None) -> None:
        self.label, self.total, self.unit = label, max(total, 1), unit
        self.stream = stream or sys.stderr
        self.start = self._last = time.perf_counter()
        self.done = 0

    def update(self, done: int) -> None:
        self.done = done
        now = time.perf_counter()
        if now - self._last >= 0.1:
            self._last = now
            self._draw(now, end="\r")

    def close(self) -> None:
        self._draw(time.perf_counter(), end="\n")

    def _draw(self, now: float, end: str) -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        frac = min(self.done / self.total, 1.0)
        eta = (self.total - self.done) / rate if rate > 0 and self.done < self.total else 0.0
        bar = "#" * int(frac * 30)
        self.stream.write(f"{self.label} [{bar:<30}] {self.done}/{self.total} {self.unit} "
                          f"{rate:,.0f} {self.unit}/s {elapsed:.1f}s elapsed ETA {eta:.0f}s   {end}")
        self.stream.flush()
