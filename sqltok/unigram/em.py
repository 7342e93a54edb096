"""SentencePiece's Unigram training loop over counted words: EM sub-iterations (expected counts by
forward-backward, the digamma M step dropping pieces expected less than half a time), then pruning
to `shrinking_factor` of the pieces by how much likelihood each one's removal costs, until at most
1.1 x `vocab_size` pieces are left; the final vocabulary adds the required characters and keeps the
best-scored pieces."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from sqltok.errors import SqltokError
from sqltok.freed_memory import release_freed_memory
from sqltok.unigram._lattice import WordLattices, reachable, second_best
from sqltok.unigram._scores import m_step, prune_losses
from sqltok.unigram.spec import UnigramSpec
from sqltok.threads import default_threads
from sqltok.training.stopwatch import Stopwatch

MIN_SCORE_PENALTY_DELTA = np.float32(0.0001)


@dataclass
class PieceSet:
    """The trainer's current pieces (large_string), in order, and their float32 scores."""

    pieces: pa.Array
    scores: np.ndarray

    def take(self, index: np.ndarray) -> "PieceSet":
        return PieceSet(self.pieces.take(pa.array(index, pa.int64())), self.scores[index])


def _sorted(pieces: list[str], scores: np.ndarray) -> list[int]:
    """Indices by score, highest first, ties by the pieces' bytes (SentencePiece's `Sorted`)."""
    return sorted(range(len(pieces)), key=lambda i: (-float(scores[i]), pieces[i].encode()))


def run_em(model: PieceSet, words: pa.Array, counts: pa.Array, spec: UnigramSpec, watch: Stopwatch) -> PieceSet:
    """Rounds of EM and pruning from the seed pieces until at most 1.1 x vocab_size pieces are left,
    then the pieces no best path can use dropped."""
    desired = int(spec.vocab_size * 1.1)
    threads = default_threads()
    with watch("em"):
        lattices = WordLattices(model.pieces, model.scores, words, counts, threads)
    while True:
        with watch("em"):
            for _ in range(spec.num_sub_iterations):
                release_freed_memory()  # what the last pass freed (each thread's heap keeps it)
                expected = lattices.e_step(model.scores, threads)
                keep, scores = m_step(expected)
                if not keep.any():
                    raise SqltokError("EM left no piece expected at least half a time; the corpus is too small")
                index = np.nonzero(keep)[0]
                model = PieceSet(model.take(index).pieces, scores)
                lattices.keep(index, threads)
        with watch("prune"):
            release_freed_memory()
            kept = prune(model, lattices, desired, spec.shrinking_factor, threads)
            model = model.take(kept)
            lattices.keep(kept, threads)
        if len(model.pieces) <= desired:
            break
    with watch("prune"):
        return model.take(np.nonzero(reachable(model.pieces, model.scores))[0])


def prune(model: PieceSet, lattices: WordLattices, desired: int, shrinking_factor: float, threads: int) -> np.ndarray:
    """The pieces to keep, in their new order: those no other segmentation replaces and the
    candidates whose removal costs most, up to max(desired, shrinking_factor x size) pieces (all of
    them when the kept ones already pass that, as SentencePiece's loop never meets the size)."""
    keep, offsets, alternatives = second_best(model.pieces, model.scores, threads)
    freq = lattices.viterbi_counts(model.scores, threads)
    status, loss = prune_losses(freq, keep, offsets, alternatives)
    kept = np.nonzero(status == 1)[0]
    candidates = np.nonzero(status == 2)[0]
    ranked = candidates[np.lexsort((candidates, -loss[candidates]))]
    size = max(desired, int(np.float32(shrinking_factor) * np.float32(len(model.pieces))))
    return np.concatenate([kept, ranked[:size - len(kept)] if len(kept) <= size else ranked])


def finalize(model: PieceSet, alphabet: list[tuple[int, int]], spec: UnigramSpec) -> list[tuple[str, float]]:
    """The final (piece, score) list, best first: every required character (those EM dropped at the
    lowest score, a little lower the rarer), then the best pieces up to vocab_size minus the meta
    pieces."""
    pieces = model.pieces.to_pylist()
    scores = dict(zip(pieces, model.scores.tolist()))
    final: dict[str, np.float32] = {}
    min_score = model.scores.min()
    penalty = np.float32(0)
    for c, _count in alphabet:
        s = chr(c)
        if s in scores:
            final[s] = np.float32(scores[s])
        else:
            final[s] = np.float32(min_score + penalty)
            penalty = np.float32(penalty + MIN_SCORE_PENALTY_DELTA)
    room = spec.vocab_size - len(spec.meta_pieces())
    if room <= 0:
        raise SqltokError(f"vocab_size {spec.vocab_size} leaves no room beside the "
                          f"{len(spec.meta_pieces())} meta pieces")
    for i in _sorted(pieces, model.scores):
        if pieces[i] in final:
            continue
        if len(final) == room:
            break
        final[pieces[i]] = model.scores[i]
    pieces = list(final)
    values = np.array([final[p] for p in pieces], dtype=np.float32)
    return [(pieces[i], float(values[i])) for i in _sorted(pieces, values)]
