"""The Unigram trainer's word lattices: found once and renumbered as pieces go (`keep`), they give the
E step and the Viterbi counts that lattices found afresh for the remaining pieces give, bit for bit,
on one thread or several; the per-position forward-backward equals the textbook per-node one, and
SentencePiece's own float32 recurrence over every node, bit for bit; the Viterbi counts equal
SentencePiece's per-node Viterbi's, ties included."""
import math

import numpy as np
import pyarrow as pa
from hypothesis import given, settings, strategies as st

from sqltok.unigram._lattice import WordLattices, second_best

ALPHABET = "ab▁çé日本"


def _words_and_pieces(data, min_words: int = 1):
    words = data.draw(st.lists(st.text(ALPHABET, min_size=1, max_size=12), min_size=min_words, max_size=300))
    chars = sorted(set("".join(words)))
    pieces = chars[:data.draw(st.integers(0, len(chars)))]  # some characters may be unknown
    for w in words[:60]:
        i = data.draw(st.integers(0, len(w) - 1))
        pieces.append(w[i:i + data.draw(st.integers(1, 4))])
    pieces = list(dict.fromkeys(pieces))
    scores = np.array(data.draw(st.lists(st.floats(-12, -0.5, width=32), min_size=len(pieces),
                                         max_size=len(pieces))), dtype=np.float32)
    counts = data.draw(st.lists(st.integers(1, 1000), min_size=len(words), max_size=len(words)))
    return (pa.array(pieces, pa.large_string()), scores, pa.array(words, pa.large_string()),
            pa.array(counts, pa.int64()))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_kept_lattices_equal_fresh_ones_on_any_threads(data):
    pieces, scores, words, counts = _words_and_pieces(data, 200)  # enough for two threads
    lattices = WordLattices(pieces, scores, words, counts, data.draw(st.integers(1, 3)))  # built on threads
    for _ in range(2):
        index = np.array(data.draw(st.permutations(range(len(pieces)))), dtype=np.int64)
        index = index[:data.draw(st.integers(1, len(index)))]
        lattices.keep(index, data.draw(st.integers(1, 3)))  # renumbered on threads
        pieces, scores = pieces.take(pa.array(index)), scores[index]
        fresh = WordLattices(pieces, scores, words, counts)
        assert lattices.nodes == fresh.nodes
        expected = fresh.e_step(scores, 1)
        best = fresh.viterbi_counts(scores, 1)
        for threads in (1, 2):
            for block_nodes in (1 << 21, data.draw(st.integers(1, 200))):  # one block, or several
                assert lattices.e_step(scores, threads, block_nodes).tobytes() == expected.tobytes()
                assert lattices.viterbi_counts(scores, threads, block_nodes).tobytes() == best.tobytes()


def _textbook_expected(pieces: list[str], scores: np.ndarray, word: str, count: int) -> np.ndarray:
    """Expected counts of one word by forward-backward over every node, in double precision."""
    n, out = len(word), np.zeros(len(pieces))
    unk = float(scores.min()) - 10
    nodes = []
    for i in range(n):
        found = [(i, i + len(p), k, float(scores[k])) for k, p in enumerate(pieces) if word.startswith(p, i)]
        if not any(e == i + 1 for _, e, _, _ in found):
            found.append((i, i + 1, 0, unk))
        nodes += found
    alpha = [-math.inf] * (n + 1)
    alpha[0] = 0.0
    for i in range(n + 1):
        for b, e, _, s in nodes:
            if e == i:
                alpha[i] = np.logaddexp(alpha[i], alpha[b] + s)
    beta = [-math.inf] * (n + 1)
    beta[n] = 0.0
    for i in range(n, -1, -1):
        for b, e, _, s in nodes:
            if b == i:
                beta[i] = np.logaddexp(beta[i], beta[e] + s)
    for b, e, k, s in nodes:
        out[k] += count * math.exp(alpha[b] + s + beta[e] - alpha[n])
    return out


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_e_step_is_forward_backward(data):
    pieces, scores, words, counts = _words_and_pieces(data)
    ours = WordLattices(pieces, scores, words, counts).e_step(scores, 2)
    textbook = sum(_textbook_expected(pieces.to_pylist(), scores, w, c)
                   for w, c in zip(words.to_pylist(), counts.to_pylist()))
    assert np.allclose(ours, textbook, rtol=1e-4, atol=1e-3)


def _log_sum_exp(x: np.float32, y: np.float32, init: bool) -> np.float32:
    """SentencePiece's LogSumExp: float32 operands, the correction in double, rounded to float32."""
    if init:
        return y
    vmin, vmax = min(x, y), max(x, y)
    if vmax > vmin + np.float32(50):
        return vmax
    return np.float32(float(vmax) + math.log1p(math.exp(float(vmin - vmax))))


def _sentencepiece_lattice(pieces: list[str], scores: np.ndarray, word: str):
    """A word's lattice as lattice.cc builds it: nodes (start, end, piece, score) in insertion order
    (BOS, at each position its pieces by length, then an unknown node where no one-character piece
    is, EOS), and per position the nodes ending and starting there, in list order."""
    unk = np.float32(scores.min() - np.float32(10))
    n = len(word)
    nodes = [(0, 0, -1, np.float32(0))]
    for i in range(n):
        found = sorted((len(p), k) for k, p in enumerate(pieces) if word.startswith(p, i))
        nodes += [(i, i + length, k, scores[k]) for length, k in found]
        if not any(length == 1 for length, _ in found):
            nodes.append((i, i + 1, 0, unk))
    nodes.append((n, n, -1, np.float32(0)))
    ending = {pos: [j for j, node in enumerate(nodes) if node[1] == pos and j != len(nodes) - 1]
              for pos in range(n + 1)}
    starting = {pos: [j for j, node in enumerate(nodes) if node[0] == pos and j != 0] for pos in range(n + 1)}
    return nodes, ending, starting


def _sentencepiece_expected(pieces: list[str], scores: np.ndarray, words: list[str], counts: list[int]) -> np.ndarray:
    """SentencePiece's E step as lattice.cc runs it: alpha of each node over the nodes ending where
    it starts and beta of each node over the nodes starting where it ends, both in list order;
    float32 totals, each addition done in double."""
    out = np.zeros(len(pieces), dtype=np.float32)
    for word, count in zip(words, counts):
        nodes, ending, starting = _sentencepiece_lattice(pieces, scores, word)
        n = len(word)
        alpha = [np.float32(0)] * len(nodes)
        beta = [np.float32(0)] * len(nodes)
        for pos in range(n + 1):
            for r in starting[pos]:
                for l in ending[pos]:
                    alpha[r] = _log_sum_exp(alpha[r], nodes[l][3] + alpha[l], l == ending[pos][0])
        for pos in range(n, -1, -1):
            for l in ending[pos]:
                for r in starting[pos]:
                    beta[l] = _log_sum_exp(beta[l], nodes[r][3] + beta[r], r == starting[pos][0])
        z = alpha[-1]
        freq = np.float32(count)
        for j, (_, _, k, score) in enumerate(nodes[1:-1], 1):
            out[k] = np.float32(float(out[k]) + float(freq) * math.exp(float(alpha[j] + score + beta[j] - z)))
    return out


def _sentencepiece_viterbi_counts(pieces: list[str], scores: np.ndarray, words: list[str],
                                  counts: list[int]) -> np.ndarray:
    """SentencePiece's prune counts: per word, lattice.cc's Viterbi (each node's predecessor the
    first node ending where it starts with the highest float32 backtrace + score), every node of
    the best path adding the word's count to its piece's float32 total."""
    out = np.zeros(len(pieces), dtype=np.float32)
    for word, count in zip(words, counts):
        nodes, ending, starting = _sentencepiece_lattice(pieces, scores, word)
        backtrace, prev = [np.float32(0)] * len(nodes), [-1] * len(nodes)
        for pos in range(len(word) + 1):
            for r in starting[pos]:
                for l in ending[pos]:
                    score = np.float32(backtrace[l] + nodes[r][3])
                    if prev[r] < 0 or score > backtrace[r]:
                        prev[r], backtrace[r] = l, score
        node = prev[-1]
        while node > 0:
            out[nodes[node][2]] += np.float32(count)
            node = prev[node]
    return out


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_e_step_is_sentencepieces_float32_arithmetic(data):
    pieces, scores, words, counts = _words_and_pieces(data, 130)
    expected = _sentencepiece_expected(pieces.to_pylist(), scores, words.to_pylist(), counts.to_pylist())
    lattices = WordLattices(pieces, scores, words, counts)
    for threads, block_nodes in ((1, 1 << 21), (2, 1 << 21), (2, 97)):
        assert lattices.e_step(scores, threads, block_nodes).tobytes() == expected.tobytes()


#: Scores whose backtraces, a few ulps apart near -1, round to the same sum with -3000.
TIE_SCORES = [-1.0, np.nextafter(np.float32(-1), np.float32(0)), np.nextafter(np.float32(-1), np.float32(-2)),
              -2.0, -3000.0, -0.5]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_viterbi_counts_are_sentencepieces(data):
    pieces, scores, words, counts = _words_and_pieces(data, 130)
    if data.draw(st.booleans()):  # backtraces that round to the same sum: the first one wins
        scores = np.array(data.draw(st.lists(st.sampled_from(TIE_SCORES), min_size=len(scores),
                                             max_size=len(scores))), dtype=np.float32)
    expected = _sentencepiece_viterbi_counts(pieces.to_pylist(), scores, words.to_pylist(), counts.to_pylist())
    lattices = WordLattices(pieces, scores, words, counts)
    for threads, block_nodes in ((1, 1 << 21), (2, 1 << 21), (2, 97)):
        assert lattices.viterbi_counts(scores, threads, block_nodes).tobytes() == expected.tobytes()


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_second_best_is_the_same_on_any_threads(data):
    pieces, scores, words, _ = _words_and_pieces(data, 200)
    pieces = pa.concat_arrays([pieces, words]).unique()  # enough pieces for two threads
    scores = np.array(data.draw(st.lists(st.floats(-12, -0.5, width=32), min_size=len(pieces),
                                         max_size=len(pieces))), dtype=np.float32)
    one = second_best(pieces, scores, 1)
    for threads in (2, 3):
        assert all(a.tobytes() == b.tobytes() for a, b in zip(second_best(pieces, scores, threads), one))
