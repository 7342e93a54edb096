"""Superword training inside DuckDB: BoundlessBPE and SuperBPE with aggregated supermerge candidates.

The stages (paper sections 2-3, Appendix B): pretoken counts (`training.counting`, or a stored
model's with `phase1=`); the phase-1 BPE merges (Cython); the supermerge candidates of every
document as phase-1 token ids (`bpe.candidate_counts`, counted like pretokens, or the stored
model's, cut for this phase 1: `bpe.phase1_reuse`); optionally the greedy split
(`bpe.greedy_split`); phase 2 in Cython (`bpe.phase2`), on its own thread while DuckDB writes the
counts; the model, its pretoken and candidate counts in one transaction. SuperBPE "match" takes r
and s from a BoundlessBPE phase 2 on the same candidates first, so one corpus pass serves both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import duckdb

from sqltok.arrow_memory import arrow_on_malloc
from sqltok.bpe.candidate_counts import candidate_lists, count_candidates, resplit_candidates
from sqltok.bpe.greedy_split import greedy_split as split_candidates
from sqltok.bpe.phase1 import Phase1
from sqltok.bpe.phase1_reuse import reuse_candidates, reuse_pretoken_counts
from sqltok.bpe.phase2 import Phase2Result, load_units, phase2_rows, run_phase2, train_units
from sqltok.interrupts import interruptible
from sqltok.training.on_cluster import cluster_counting
from sqltok.bpe.settings import DEFAULT_SPECIAL_TOKENS, MIN_VOCAB_SIZE, check_special_tokens, check_vocab_size
from sqltok.bpe.train import merge_pretokens
from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.register import register
from sqltok.store import (check_new_name, delete_rows, ensure_schema, save_candidates, save_model_rows,
                          save_pretoken_counts, transaction)
from sqltok.training.background import Background
from sqltok.training.counting import Counts, count_corpus
from sqltok.training.stopwatch import Stopwatch
from sqltok.training.work_tables import WorkTables


@dataclass
class SuperwordReport:
    """What a superword training run did: corpus, aggregation (type-token ratios) and stage times."""

    model: str
    method: str
    documents: int
    bytes: int
    pretokens: int              # pretoken occurrences
    unique_pretokens: int
    candidates: int             # candidate occurrences
    unique_candidates: int
    pieces: int | None          # piece occurrences after the greedy split (None: not split)
    unique_pieces: int | None
    regular_merges: int
    supermerges: int
    vocab_size: int
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def pretoken_type_token_ratio(self) -> float:
        return self.unique_pretokens / max(1, self.pretokens)

    @property
    def candidate_type_token_ratio(self) -> float:
        return self.unique_candidates / max(1, self.candidates)

    @property
    def piece_type_token_ratio(self) -> float | None:
        return None if self.pieces is None else self.unique_pieces / max(1, self.pieces)


@interruptible
def train_superword(con: duckdb.DuckDBPyConnection, source: Source | str | None, vocab_size: int, model: str, *,
                    method: Literal["boundless", "superbpe"] = "boundless",
                    supermerges: int | Literal["match"] | None = None, greedy_split: bool = False,
                    simple: bool = False, special_tokens=DEFAULT_SPECIAL_TOKENS, replace: bool = False,
                    phase1: str | None = None, progress: bool = False, cluster=None) -> SuperwordReport:
    """Train a BoundlessBPE (`method="boundless"`) or SuperBPE (`method="superbpe"`) model named
    `model` on `source` and store it in `con`'s database, identical to the reference implementation.

    BoundlessBPE finds the number of regular merges and supermerges itself. SuperBPE adds
    `supermerges` supermerges to a phase-1 model of `vocab_size - supermerges` tokens; "match" takes the
    number a BoundlessBPE run of `vocab_size` finds (the two models are then the same). `greedy_split`
    splits candidates into frequent pretoken n-grams first (paper Appendix B). `phase1` names a stored
    two-phase model trained on the same corpus whose pretoken and candidate counts are reused; `source`
    is then ignored. With `cluster` (a dask client or a `sqltok.cluster.Cluster`), a file source's
    pretokens and candidates are counted on the cluster.
    """
    _check_arguments(vocab_size, method, supermerges)
    special_tokens = check_special_tokens(special_tokens)
    register(con)
    ensure_schema(con)
    check_new_name(con, model, replace)
    target = vocab_size - supermerges if isinstance(supermerges, int) else vocab_size  # phase-1 size
    watch = Stopwatch(con if progress else None)
    with WorkTables(con) as work, arrow_on_malloc():
        with watch("pretokenize_and_count"):  # the corpus's pretokens, or those a stored model kept
            if phase1 is not None:
                counts = reuse_pretoken_counts(con, phase1, target, work)
                if simple and counts.script_aware:  # its counts are of script runs: they cannot give it
                    raise SqltokError(f"model {phase1!r} counted its pretokens in runs of one script; "
                                      "simple=True (--simple) needs a corpus pass or a simple phase-1 model")
            elif cluster is not None:
                counts = cluster_counting().count_corpus_on(cluster, con, source, not simple, work, watch, progress)
            else:
                counts = count_corpus(con, source, not simple, work)
        with watch("phase1"):
            pretokens = counts.pretokens.arrow(con)
            merged = merge_pretokens(pretokens, target, progress, "phase 1")
            p1 = Phase1.of_loop(merged, counts.script_aware, special_tokens)
        with watch("candidates"):
            if phase1 is not None:
                candidates = reuse_candidates(con, phase1, p1.model, work)
            elif cluster is not None:
                candidates = cluster_counting().count_candidates_on(cluster, con, source, p1.model, work, watch,
                                                                    progress)
            else:
                candidates = count_candidates(con, counts.query, p1.tokens, pretokens, merged["singles"],
                                              counts.script_aware, work)
            if greedy_split or supermerges == "match":  # SQL splits them again: as lists
                candidates = candidate_lists(con, candidates, work)
            del pretokens, merged
        plan = _plan_phase2(con, p1, candidates, target, vocab_size, method, supermerges, greedy_split, progress,
                            work, watch)
        # Phase 2 reads its units here, then trains (Cython, GIL released) on one core while DuckDB
        # writes the counts on the other.
        with watch("phase2"):
            loaded = load_units(con, plan.units, plan.base, plan.prune)
        with transaction(con), Background(train_units, loaded, plan.base, vocab_size, method, plan.supermerges,
                                          progress) as job:
            del loaded  # the run owns the units now, and frees them as it ends
            with watch("store"):
                delete_rows(con, model)
                save_pretoken_counts(con, model, counts.pretokens.table)
                save_candidates(con, model, candidates.table, p1.tokens, candidates.keys)
            out = job.result()
            watch.seconds["phase2"] += job.seconds
            if out is None:  # a supermerge's bytes were a token already: the cuts may not hold
                with watch("phase2"):
                    out = run_phase2(con, plan.units, plan.base, vocab_size, method, plan.supermerges, None, progress)
            if plan.matched is not None and out.supermerge_bytes() != plan.matched.supermerge_bytes():
                # Pruned SuperBPE equals BoundlessBPE only if the unpruned one does (paper section 3.1);
                # when not, the cuts may have mattered: run it again without them.
                with watch("phase2"):
                    out = run_phase2(con, plan.units, plan.base, vocab_size, method, plan.supermerges, None, progress)
            rows = phase2_rows(plan.base, out, method, special_tokens)
            save_model_rows(con, model, rows, counts.stats.model_info(phase1_vocab_size=target))
    pieces = plan.pieces
    return SuperwordReport(model, method, counts.stats.documents, counts.stats.bytes, counts.pretokens.total,
                           counts.pretokens.unique, candidates.total, candidates.unique,
                           None if pieces is None else pieces.total, None if pieces is None else pieces.unique,
                           out.regular, len(out.left), rows.tokens.num_rows, watch.seconds)


@dataclass(frozen=True)
class _Phase2Plan:
    """What phase 2 runs on: phase-1 model `base`, the weighted sequences `units` (the candidates, or
    their greedy-split `pieces`), how many supermerges (SuperBPE), the pruning count, and the
    BoundlessBPE result a "match" run took r and s from."""

    base: Phase1
    units: Counts
    pieces: Counts | None
    supermerges: int
    prune: int | None
    matched: Phase2Result | None


def _plan_phase2(con, p1: Phase1, candidates: Counts, target: int, vocab_size: int, method: str, supermerges,
                 greedy_split: bool, progress: bool, work: WorkTables, watch: Stopwatch) -> _Phase2Plan:
    """BoundlessBPE and SuperBPE with s given run on `p1` and its candidates; SuperBPE "match" first
    runs BoundlessBPE's phase 2 on them for r and s, then goes on from `p1`'s first r merges with the
    candidates cut where a unit is no longer one token."""
    prune = p1.prune_below(target)
    if supermerges == "match":
        with watch("phase2_boundless"):
            units, _ = _phase2_units(con, candidates, p1, greedy_split, work, watch)
            matched = run_phase2(con, units, p1, vocab_size, "boundless", 0, prune, progress)
        base = p1.prefix(matched.regular)
        resplit = resplit_candidates(con, candidates.table, base.model, work, "resplit")
        units, pieces = _phase2_units(con, resplit, base, greedy_split, work, watch)
        return _Phase2Plan(base, units, pieces, len(matched.left), prune, matched)
    units, pieces = _phase2_units(con, candidates, p1, greedy_split, work, watch)
    # SuperBPE's s supermerges may go below any phase-1 count: no pruning.
    return _Phase2Plan(p1, units, pieces, supermerges or 0, None if method == "superbpe" else prune, None)


def _check_arguments(vocab_size: int, method: str, supermerges) -> None:
    check_vocab_size(vocab_size)
    if method not in ("boundless", "superbpe"):
        raise SqltokError(f"method must be 'boundless' or 'superbpe', not {method!r}")
    if method == "boundless" and supermerges is not None:
        raise SqltokError("BoundlessBPE finds the number of supermerges itself; do not give supermerges")
    if method == "superbpe":
        _check_supermerges(supermerges, vocab_size)


def _check_supermerges(supermerges, vocab_size: int) -> None:
    if supermerges == "match":
        return
    if not isinstance(supermerges, int) or isinstance(supermerges, bool) or supermerges < 1:
        raise SqltokError(f"SuperBPE needs supermerges: a positive number or 'match', not {supermerges!r}")
    if vocab_size - supermerges < MIN_VOCAB_SIZE:
        raise SqltokError(f"{supermerges} supermerges leave a phase-1 vocabulary of {vocab_size - supermerges} "
                          f"tokens, fewer than the {MIN_VOCAB_SIZE} byte tokens")


def _phase2_units(con, candidates: Counts, p1: Phase1, greedy_split: bool, work: WorkTables,
                  watch: Stopwatch) -> tuple[Counts, Counts | None]:
    """The weighted sequences phase 2 merges over: the candidates, or their greedy-split pieces (both
    the units and the pieces' counts)."""
    if not greedy_split:
        return candidates, None
    with watch("greedy_split"):
        pieces = split_candidates(con, candidates, p1.last_count(), work)
    return pieces, pieces
