"""Seconds per training stage, for the reports, and the progress of the stages' SQL when asked for."""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from typing import Iterator

import duckdb

from sqltok.progress import QueryProgress


class Stopwatch:
    """`with watch("merge"): ...` adds the block's wall time to `watch.seconds["merge"]`; with `con`,
    the queries a stage runs show their progress (stages of Cython code draw their own bars)."""

    def __init__(self, con: duckdb.DuckDBPyConnection | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self._con = con

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        with QueryProgress(self._con, stage.replace("_", " ")) if self._con is not None else nullcontext():
            yield
        self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - t0
