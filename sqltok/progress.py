"""A one-line progress bar on stderr: done/total, rate and ETA; and the same for a DuckDB query
that runs (`QueryProgress`). Quiet unless asked for."""
from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

import duckdb

#: The ETA is shown once this share is done (early rates mislead: the first merges are the slowest).
ETA_AFTER = 0.1


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
        eta = f"ETA {(self.total - self.done) / rate:.0f}s" if rate > 0 and ETA_AFTER <= frac < 1 else \
            "" if frac >= 1 else "ETA ..."
        bar = "#" * int(frac * 30)
        self.stream.write(f"{self.label} [{bar:<30}] {self.done}/{self.total} {self.unit} "
                          f"{rate:,.0f} {self.unit}/s {elapsed:.1f}s elapsed {eta}   {end}")
        self.stream.flush()


class QueryProgress:
    """`with QueryProgress(con, "counting pretokens"): con.execute(...)`: a bar of the share of the
    running query DuckDB reports done (`query_progress()`, polled from a thread of its own), drawn
    once the query has run for a second."""

    def __init__(self, con: duckdb.DuckDBPyConnection, label: str, stream: TextIO | None = None,
                 after: float = 1.0) -> None:
        self.con, self.label, self.stream, self.after = con, label, stream, after
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._bar: Progress | None = None

    def __enter__(self) -> "QueryProgress":
        # DuckDB tracks a query's progress only with its bar on; ours draws it instead of DuckDB's.
        self._settings = {k: self.con.execute(f"SELECT current_setting('{k}')").fetchall()[0][0]
                          for k in ("enable_progress_bar", "enable_progress_bar_print")}
        self.con.execute("SET enable_progress_bar = true")
        self.con.execute("SET enable_progress_bar_print = false")
        self._thread.start()
        return self

    def _poll(self) -> None:
        start = time.perf_counter()
        while not self._stop.wait(0.25):
            try:
                done = self.con.query_progress()
            except duckdb.Error:  # the connection is busy closing or gone: nothing to show
                return
            if done < 0 or time.perf_counter() - start < self.after:
                continue
            if self._bar is None:
                self._bar = Progress(self.label, 100, "%", self.stream)
                self._bar.start = start
            self._bar.update(int(done))

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        try:
            for k, v in self._settings.items():
                self.con.execute(f"SET {k} = {bool(v)}")
        except duckdb.Error:  # an aborted transaction: its error is the one to report
            pass
        if self._bar is not None:
            self._bar.update(100)
            self._bar.close()


class ShardProgress(Progress):
    """A bar over a cluster run's shards: call `advance(nbytes)` as each finishes; shows done/total
    shards, the MB/s of their input and the ETA."""

    def __init__(self, label: str, total: int, total_bytes: int, stream: TextIO | None = None) -> None:
        super().__init__(label, total, "shards", stream)
        self.total_bytes = max(total_bytes, 1)
        self.done_bytes = 0

    def advance(self, nbytes: int) -> None:
        self.done_bytes += nbytes
        self.update(self.done + 1)

    def _draw(self, now: float, end: str) -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done_bytes / elapsed
        frac = min(self.done_bytes / self.total_bytes, 1.0)
        eta = f"ETA {(self.total_bytes - self.done_bytes) / rate:.0f}s" if rate > 0 and frac < 1 else \
            "" if frac >= 1 else "ETA ..."
        self.stream.write(f"{self.label} [{'#' * int(frac * 30):<30}] {self.done}/{self.total} shards "
                          f"{rate / 1e6:,.1f} MB/s {elapsed:.1f}s elapsed {eta}   {end}")
        self.stream.flush()
