"""The BPE merge loop (`merge_state.pxi`, through `train_bpe` and `extend_merges`) against a textbook
BPE trainer with the reference's rules that recounts every pair at every merge: on corpora over three
letters, and over a base vocabulary whose tokens overlap, where merges make tokens that exist already
(the loop must then find the pairs that earlier merges made with them)."""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sqltok.bpe._train import BYTE_ALPHABET, train_bpe
from sqltok.extend._merge import extend_merges


def _counted_pairs(seq: list[int]) -> list[tuple[int, int]]:
    """The pairs of `seq` as the reference counts them: a run of n equal tokens holds n // 2."""
    pairs, i = [], 0
    while i + 1 < len(seq):
        pairs.append((seq[i], seq[i + 1]))
        i += 2 if seq[i] == seq[i + 1] and i + 2 < len(seq) and seq[i + 2] == seq[i] else 1
    return pairs


def _textbook(tokens: list[bytes], seqs: list[list[int]], weights: list[int], max_tokens: int,
              max_merges: int) -> tuple[list[tuple], list[bytes]]:
    """Merges (left, right, new id, count, flag) and tokens: best pair by count, then the smaller left
    bytes, then the smaller right bytes; applied left to right without overlap; a token made again
    keeps its id. Until `max_tokens` tokens or `max_merges` merges (-1: no such limit)."""
    tokens = list(tokens)
    ids = {t: i for i, t in enumerate(tokens)}
    seqs = [list(s) for s in seqs]
    merges = []
    while (max_tokens < 0 or len(tokens) < max_tokens) and (max_merges < 0 or len(merges) < max_merges):
        counts: Counter = Counter()
        for seq, weight in zip(seqs, weights):
            for pair in _counted_pairs(seq):
                counts[pair] += weight
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], tokens[p[0]], tokens[p[1]]))
        merged = tokens[best[0]] + tokens[best[1]]
        new_id = ids.setdefault(merged, len(tokens))
        if new_id == len(tokens):
            tokens.append(merged)
        flag = 0
        for k, seq in enumerate(seqs):
            out, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    out.append(new_id)
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            flag |= len(out) == 1 and len(seq) > 1
            seqs[k] = out
        merges.append((best[0], best[1], new_id, counts[best], int(flag)))
    return merges, tokens


def _merges(out: dict) -> list[tuple]:
    return list(zip(*(out[k].to_pylist() for k in ("left", "right", "new_id", "count", "flag"))))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=14), st.integers(1, 6), min_size=1, max_size=25),
       st.integers(0, 40))
def test_merges_from_bytes_equal_the_textbook_trainer(words, extra):
    corpus = {w.encode(): n for w, n in words.items()}
    out = train_bpe(pa.array(list(corpus), pa.binary()), pa.array(list(corpus.values()), pa.int64()),
                    len(BYTE_ALPHABET) + extra)
    byte_tokens = [bytes([b]) for b in BYTE_ALPHABET]
    seqs = [[BYTE_ALPHABET.index(b) for b in w] for w in corpus]
    merges, tokens = _textbook(byte_tokens, seqs, list(corpus.values()), len(BYTE_ALPHABET) + extra, -1)
    assert _merges(out) == merges
    assert out["tokens"].to_pylist() == tokens


BASE = [b"a", b"b", b"c", b"ab", b"bc", b"abc", b"ca", b"bca", b"cab"]


@settings(max_examples=300, deadline=None)
@example(rows=[([0, 1, 2, 1, 1], 1), ([5, 1, 1], 1)], add=4)  # base 'abc' made again; needs ('abc', 'bb')
@given(st.lists(st.tuples(st.lists(st.integers(0, len(BASE) - 1), min_size=1, max_size=10), st.integers(1, 6)),
                min_size=1, max_size=25),
       st.integers(0, 30))
def test_merges_over_a_base_vocabulary_equal_the_textbook_trainer(rows, add):
    """Over base tokens that overlap, merges make tokens that exist already (in the base, or made
    before by another pair) again and again."""
    seqs, weights = [r[0] for r in rows], [r[1] for r in rows]
    out = extend_merges(pa.array(seqs, pa.large_list(pa.int32())), pa.array(weights, pa.int64()), BASE, add)
    merges, tokens = _textbook(BASE, seqs, weights, -1, add)
    assert _merges(out) == merges
    assert out["tokens"].to_pylist() == tokens[len(BASE):]
