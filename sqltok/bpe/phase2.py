"""Phase 2 of superword training: the supermerges over the counted candidates (Cython), read from
DuckDB in batches into compact unit sequences (no whole Arrow table is held), trained on a thread of
its own when the caller has other work meanwhile (`training.background`), and the two-phase model it
makes."""
from __future__ import annotations

import threading
from dataclasses import dataclass

import duckdb

from sqltok.bpe._phase2 import Phase2Units
from sqltok.bpe.model import Merge, Model
from sqltok.bpe.settings import MIN_VOCAB_SIZE
from sqltok.duck import arrow_batches
from sqltok.errors import SqltokError
from sqltok.progress import Progress
from sqltok.training.collector import collector_paused
from sqltok.training.counting import Counts

BATCH_ROWS = 1 << 17  # candidates per batch read from DuckDB


@dataclass(frozen=True)
class Phase2Result:
    """The final vocabulary (tokens, is_super, token_counts), how many phase-1 merges were kept (in
    order) and the supermerges, in final ids."""

    tokens: list[bytes]
    is_super: list[bool]
    token_counts: list[int]
    regular: int
    supermerges: list[Merge]

    def supermerge_bytes(self) -> list[tuple[bytes, bytes]]:
        """The supermerges as pairs of token bytes (ids differ between methods)."""
        return [(self.tokens[m.left], self.tokens[m.right]) for m in self.supermerges]


def prune_below(p1: Model, target: int) -> int | None:
    """The count every BoundlessBPE supermerge exceeds (and so every supermerge of the matching
    SuperBPE): the smallest phase-1 merge count, when phase 1 reached its full size (otherwise the
    regular merges can run out, and then any count wins: None)."""
    if len(p1.tokens) < target or not p1.merges:
        return None
    return min(m.count for m in p1.merges)


def prefix(p1: Model, merges: int) -> Model:
    """The phase-1 model cut to its first `merges` merges (BPE stopped earlier gives exactly that)."""
    size = MIN_VOCAB_SIZE + len(set(p1.new_ids(p1.merges[:merges])))
    return Model(method="word", tokens=p1.tokens[:size], token_counts=p1.token_counts[:size],
                 is_super=p1.is_super[:size], merges=p1.merges[:merges], settings=p1.settings,
                 special_tokens={s: size + i for i, s in enumerate(p1.special_tokens)})


def load_units(con: duckdb.DuckDBPyConnection, units: Counts, p1: Model, prune: int | None) -> Phase2Units:
    """The weighted sequences of work table `units` (candidate lists of `p1` token ids, n), read in
    batches, cut below `prune` (see `prune_below`; None: not cut)."""
    def batches():
        for batch in arrow_batches(con, f"SELECT {units.column}, n FROM {units.table}", BATCH_ROWS):
            yield batch.column(0), batch.column(1)
    return Phase2Units(p1.tokens, batches, -1 if prune is None else prune, units.unique)


def train_units(loaded: Phase2Units, p1: Model, vocab_size: int, method: str, supermerges: int, progress: bool,
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

    out = loaded.train(p1.new_ids(p1.merges), [m.count for m in p1.merges], vocab_size, method, supermerges,
                       progress=report if bar is not None or cancel is not None else None)
    if bar is not None:
        bar.close()
    if out is None:
        return None
    with collector_paused():
        supers = [Merge(*m) for m in zip(*(out[k].to_pylist() for k in ("left", "right", "count", "flag", "new_id")))]
        return Phase2Result(out["tokens"].to_pylist(), [bool(x) for x in out["is_super"].to_pylist()],
                            out["token_counts"].to_pylist(), out["regular"], supers)


def run_phase2(con: duckdb.DuckDBPyConnection, units: Counts, p1: Model, vocab_size: int, method: str,
               supermerges: int, prune: int | None, progress: bool) -> Phase2Result:
    """Phase 2 over work table `units` (candidate, n) on phase-1 model `p1`, pruned below `prune`,
    and without the cuts when they may not hold."""
    out = train_units(load_units(con, units, p1, prune), p1, vocab_size, method, supermerges, progress)
    if out is None:
        out = train_units(load_units(con, units, p1, None), p1, vocab_size, method, supermerges, progress)
    return out


def assemble(p1: Model, out: Phase2Result, method: str, special_tokens) -> Model:
    """The two-phase model: phase-1 merges kept (in final ids), supermerges, settings as the reference."""
    with collector_paused():
        final = {t: i for i, t in enumerate(out.tokens)}
        regular = [Merge(final[p1.tokens[m.left]], final[p1.tokens[m.right]], m.count, m.flag)
                   for m in p1.merges[:out.regular]]
    return Model(
        method=method, tokens=out.tokens, token_counts=out.token_counts, is_super=out.is_super, merges=regular,
        settings=p1.settings, special_tokens={s: len(out.tokens) + i for i, s in enumerate(special_tokens)},
        supermerges=out.supermerges,
        super_settings=dict(p1.settings, is_super=True, superbpe_mode=method == "superbpe"),
    )
