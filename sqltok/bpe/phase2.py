"""Phase 2 of superword training: the supermerges over the counted candidates (Cython), read from
DuckDB in batches into compact unit sequences (no whole Arrow table is held), trained on a thread of
its own when the caller has other work meanwhile (`training.background`), and the two-phase model it
makes."""
from __future__ import annotations

import threading
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from sqltok.bpe._phase2 import Phase2Units
from sqltok.bpe.candidates import candidate_ids
from sqltok.bpe.phase1 import Phase1
from sqltok.bpe.settings import MIN_VOCAB_SIZE, special_token_ids
from sqltok.duck import arrow_batches
from sqltok.errors import SqltokError
from sqltok.progress import Progress
from sqltok.store import ModelRows, merge_table, token_table
from sqltok.training.counting import Counts

BATCH_ROWS = 1 << 17  # candidates per batch read from DuckDB
HELD_BYTES = 256 << 20  # when pruning reads the candidates twice, up to this many are read from DuckDB once


@dataclass(frozen=True)
class Phase2Result:
    """The final vocabulary (`tokens`, `is_super`, `token_counts`), how many phase-1 merges were kept
    (in order), the supermerges in final ids (`left`, `right`, `new_id`, `count`, `flag`) and each
    phase-1 token's final id (`phase1_ids`, -1: not kept): Arrow arrays, as phase 2 made them."""

    tokens: pa.Array
    is_super: pa.Array
    token_counts: pa.Array
    regular: int
    left: pa.Array
    right: pa.Array
    new_id: pa.Array
    count: pa.Array
    flag: pa.Array
    phase1_ids: pa.Array

    def supermerge_bytes(self) -> list[tuple[bytes, bytes]]:
        """The supermerges as pairs of token bytes (ids differ between methods)."""
        tokens = self.tokens.to_pylist()
        return [(tokens[a], tokens[b]) for a, b in zip(self.left.to_pylist(), self.right.to_pylist())]


def load_units(con: duckdb.DuckDBPyConnection, units: Counts, p1: Phase1, prune: int | None) -> Phase2Units:
    """The weighted sequences of work table `units` (candidate lists of `p1` token ids, or their keys,
    and n), read in batches, cut below `prune` (see `Phase1.prune_below`; None: not cut). Pruning
    reads them twice: the second time from the first read's batches when they took at most
    HELD_BYTES."""
    held: list[pa.RecordBatch] | None = [] if prune is not None else None
    whole = False

    def pair(batch: pa.RecordBatch) -> tuple[pa.Array, pa.Array]:
        return (candidate_ids(batch.column(0)) if units.keys else batch.column(0)), batch.column(1)

    def batches():
        nonlocal held, whole
        if whole and held is not None:
            yield from (pair(batch) for batch in held)
            return
        size = 0
        for batch in arrow_batches(con, f"SELECT {units.column}, n FROM {units.table}", BATCH_ROWS):
            if held is not None:
                size += batch.nbytes
                if size <= HELD_BYTES:
                    held.append(batch)
                else:
                    held = None
            yield pair(batch)
        whole = True
    return Phase2Units(p1.tokens, batches, -1 if prune is None else prune, units.unique)


def train_units(loaded: Phase2Units, p1: Phase1, vocab_size: int, method: str, supermerges: int, progress: bool,
                cancel: threading.Event | None = None) -> Phase2Result | None:
    """Phase 2 over `loaded` on phase-1 model `p1` (it may run on a thread of its own: no DuckDB);
    None when the cuts may not hold (load again without them); `cancel`, when set by another
    thread, stops it with SqltokError."""
    total = supermerges if method == "superbpe" else vocab_size - MIN_VOCAB_SIZE
    bar = Progress(f"phase 2 ({method})", total, "steps" if method == "boundless" else "supermerges") \
        if progress else None

    def report(done: int, size: int) -> None:
        if cancel is not None and cancel.is_set():
            raise SqltokError("phase 2 cancelled")
        if bar is not None:
            bar.update(done if method == "superbpe" else size - MIN_VOCAB_SIZE)

    out = loaded.train(p1.column("new_id"), p1.column("count"), vocab_size, method, supermerges,
                       progress=report if bar is not None or cancel is not None else None)
    if bar is not None:
        bar.close()
    return None if out is None else Phase2Result(**out)


def run_phase2(con: duckdb.DuckDBPyConnection, units: Counts, p1: Phase1, vocab_size: int, method: str,
               supermerges: int, prune: int | None, progress: bool) -> Phase2Result:
    """Phase 2 over work table `units` (candidate, n) on phase-1 model `p1`, pruned below `prune`,
    and without the cuts when they may not hold."""
    out = train_units(load_units(con, units, p1, prune), p1, vocab_size, method, supermerges, progress)
    if out is None:
        out = train_units(load_units(con, units, p1, None), p1, vocab_size, method, supermerges, progress)
    return out


def phase2_rows(p1: Phase1, out: Phase2Result, method: str, special_tokens) -> ModelRows:
    """The rows of the two-phase model: the phase-1 merges kept (in final ids), the supermerges,
    settings as the reference."""
    final = out.phase1_ids.to_numpy()
    kept = p1.merges.slice(0, out.regular)
    regular = merge_table(False, *(final[kept.column(k).to_numpy()] for k in ("left", "right", "new_id")),
                          kept.column("count"), kept.column("flag"))
    supers = merge_table(True, out.left, out.right, out.new_id, out.count, out.flag)
    return ModelRows(method, p1.settings, dict(p1.settings, is_super=True, superbpe_mode=method == "superbpe"),
                     token_table(out.tokens, out.token_counts, out.is_super), pa.concat_tables([regular, supers]),
                     special_token_ids(len(out.tokens), special_tokens))
