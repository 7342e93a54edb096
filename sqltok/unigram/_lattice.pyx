# cython: language_level=3
"""The Unigram trainer's loops over the lattice of a text (one node per vocabulary piece that starts
at a character, an unknown node where no one-character piece does), in SentencePiece's float32
arithmetic and its node order, so that sums round as they do there:

- `WordLattices`: every word's nodes, found once and renumbered as pieces go; its `e_step`
  (forward-backward over every word, each piece's expected count) and `viterbi_counts` (each
  piece's count on the best paths of every word, for pruning) split the words over threads;
- `reachable`: whether a piece's own text has a better path without it (final clean-up);
- `second_best`: the best and the second-best path of each piece's own text (A* search, the agenda
  a binary heap ordered as the C++ standard library's, which decides between equal scores).

Unknown nodes count for piece 0, as the C++ trainer's do (its unknown id is 0). The GIL is
released over the words and the pieces.
"""
from cython.operator cimport dereference as deref
from libc.math cimport INFINITY, exp, log1p
from libc.string cimport memmove
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np
from cython.parallel cimport prange

from sqltok.unigram.piece_trie cimport PieceTrie, trie_child, trie_init, trie_insert
from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_values, view_end, view_start
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run

cdef float UNK_PENALTY = 10.0
DEF SWEEP_BLOCK_NODES = 1 << 21  # a sweep's block: what its threads keep for later follows it


cdef struct Lattice:
    vector[int64_t] surface      # byte offset of each character, and of the end
    vector[int32_t] node_pos     # node 0 is BOS, node 1 EOS, then the pieces in insertion order
    vector[int32_t] node_len
    vector[int32_t] node_id
    vector[float] node_score
    vector[float] backtrace
    vector[int32_t] prev
    vector[int32_t] begin_start  # nodes starting at pos are begin_start[pos] .. begin_start[pos+1]-1
    vector[int32_t] end_start    # nodes ending at pos are end_nodes[end_start[pos] .. end_start[pos+1]-1]
    vector[int32_t] end_nodes
    vector[float] alpha
    vector[float] beta
    vector[float] best_score     # Viterbi from stored nodes, per position
    vector[float] runner_up
    vector[int32_t] best_node
    int32_t length               # characters


cdef struct Pieces:
    PieceTrie trie
    vector[float] scores
    vector[int32_t] chars        # per piece: its length in characters
    int32_t max_chars
    float unk_score


cdef struct Part:               # what a thread found for a run of words it could not add at once
    vector[double] values       # E step: each node's count x marginal, in node order; Viterbi: a count
    vector[int32_t] ids         # Viterbi: the piece of each value
    int64_t first               # its words: first .. last-1
    int64_t last


cdef struct PieceNode:          # what a sweep reads of a node's piece, side by side
    float score
    int32_t chars


cdef struct Sweep:              # one E step or Viterbi pass over the words
    void* lattices              # the WordLattices
    const PieceNode* pieces     # per piece: its score and length
    float unk_score
    bint expect                 # E step (else Viterbi)
    float* out                  # per piece: the float32 totals
    Part* parts                 # per part of the row driver
    Lattice* lats               # per thread
    int* nan                    # per thread: a likelihood was NaN
    int64_t offset              # the first word of the block being swept


cdef inline int64_t _char_len(uint8_t b) noexcept nogil:
    if b < 0x80:
        return 1
    if b < 0xE0:
        return 2
    if b < 0xF0:
        return 3
    return 4


cdef inline int64_t _n_chars(const uint8_t* s, int64_t n) noexcept nogil:
    """The characters of s[:n] as `_build` cuts them (a character cut short by the end counts)."""
    cdef int64_t i = 0, chars = 0
    while i < n:
        i += _char_len(s[i])
        chars += 1
    return chars


cdef void _build(Lattice& lat, const Pieces& pieces, const uint8_t* s, int64_t n, bint unknown) noexcept nogil:
    """The lattice of s[:n] with its nodes in SentencePiece's insertion order (without unknown nodes
    unless `unknown`), not yet indexed by end (`_index_ends`)."""
    cdef int64_t i = 0, k, b
    cdef int32_t length, pos
    cdef bint single
    cdef int32_t trie_node
    lat.surface.clear()
    while i < n:
        lat.surface.push_back(i)
        k = _char_len(s[i])
        i = i + k if i + k <= n else n
    lat.surface.push_back(n)
    length = <int32_t>lat.surface.size() - 1
    _start(lat, length)
    for pos in range(length):
        lat.begin_start[pos] = <int32_t>lat.node_pos.size()
        single = False
        trie_node = 0
        for k in range(1, min(pieces.max_chars, length - pos) + 1):
            for b in range(lat.surface[pos + k - 1], lat.surface[pos + k]):
                trie_node = trie_child(pieces.trie, trie_node, s[b])
                if trie_node < 0:
                    break
            if trie_node < 0:
                break  # no piece starts with these characters
            if pieces.trie.values[trie_node] >= 0:
                _push(lat, pos, <int32_t>k, pieces.trie.values[trie_node], pieces.scores[pieces.trie.values[trie_node]])
                if k == 1:
                    single = True
        if unknown and not single:
            _push(lat, pos, 1, 0, pieces.unk_score)
    lat.begin_start[length] = <int32_t>lat.node_pos.size()


cdef void _start(Lattice& lat, int32_t length) noexcept nogil:
    """An empty lattice of `length` characters: BOS (node 0) and EOS (node 1)."""
    lat.length = length
    lat.node_pos.resize(2)
    lat.node_len.resize(2)
    lat.node_id.resize(2)
    lat.node_score.resize(2)
    lat.node_pos[0] = 0
    lat.node_len[0] = 0
    lat.node_id[0] = -1
    lat.node_score[0] = 0
    lat.node_pos[1] = length
    lat.node_len[1] = 0
    lat.node_id[1] = -1
    lat.node_score[1] = 0
    lat.begin_start.resize(length + 1)


cdef inline void _push(Lattice& lat, int32_t pos, int32_t chars, int32_t piece, float score) noexcept nogil:
    lat.node_pos.push_back(pos)
    lat.node_len.push_back(chars)
    lat.node_id.push_back(piece)
    lat.node_score.push_back(score)


cdef void _index_ends(Lattice& lat) noexcept nogil:
    """The nodes ending at each position, in insertion order (BOS ends at 0)."""
    cdef int32_t length = lat.length, node, e, pos
    lat.end_start.assign(length + 2, 0)
    lat.end_start[1] = 1
    for node in range(2, <int32_t>lat.node_pos.size()):
        lat.end_start[lat.node_pos[node] + lat.node_len[node] + 1] += 1
    for pos in range(1, length + 2):
        lat.end_start[pos] += lat.end_start[pos - 1]
    lat.end_nodes.resize(lat.end_start[length + 1])
    lat.prev.assign(lat.end_start.begin(), lat.end_start.end())  # fill cursors
    lat.end_nodes[0] = 0
    lat.prev[0] = 1
    for node in range(2, <int32_t>lat.node_pos.size()):
        e = lat.node_pos[node] + lat.node_len[node]
        lat.end_nodes[lat.prev[e]] = node
        lat.prev[e] += 1


cdef inline int32_t _begin_first(const Lattice& lat, int32_t pos) noexcept nogil:
    return 1 if pos == lat.length else lat.begin_start[pos]


cdef inline int32_t _begin_last(const Lattice& lat, int32_t pos) noexcept nogil:
    return 2 if pos == lat.length else lat.begin_start[pos + 1]


cdef inline float _log_sum_exp(float x, float y) noexcept nogil:
    """SentencePiece's LogSumExp past a sum's first term (x = -inf gives y: its first term)."""
    cdef float vmin, vmax
    vmin = x if x < y else y
    vmax = y if x < y else x
    if vmax > vmin + <float>50.0:
        return vmax
    return <float>(<double>vmax + log1p(exp(<double>(vmin - vmax))))


cdef inline void _add(float* out, int32_t piece, double value) noexcept nogil:
    """SentencePiece's `expected[id] += freq * exp(...)`: a float32 total plus a double, rounded."""
    out[piece] = <float>(<double>out[piece] + value)


cdef void _viterbi(Lattice& lat) noexcept nogil:
    cdef int32_t pos, r, j, l, best
    cdef float best_score, score
    lat.backtrace.assign(lat.node_pos.size(), 0)
    lat.prev.assign(lat.node_pos.size(), -1)
    for pos in range(lat.length + 1):
        for r in range(_begin_first(lat, pos), _begin_last(lat, pos)):
            best = -1
            best_score = 0
            for j in range(lat.end_start[pos], lat.end_start[pos + 1]):
                l = lat.end_nodes[j]
                score = lat.backtrace[l] + lat.node_score[r]
                if best < 0 or score > best_score:
                    best = l
                    best_score = score
            lat.prev[r] = best
            lat.backtrace[r] = best_score


cdef int _load_pieces(Pieces& p, object pieces, object scores) except -1:
    cdef list keep = []
    cdef BinaryView v = binary_view(pieces, keep)
    cdef const float[:] sc = np.ascontiguousarray(scores, dtype=np.float32)
    cdef int64_t i, b, e
    cdef float low = 3.4028234663852886e38
    trie_init(p.trie)
    p.scores.resize(v.length)
    p.chars.resize(v.length)
    p.max_chars = 1
    for i in range(v.length):
        b, e = view_start(v, i), view_end(v, i)
        trie_insert(p.trie, v.values + b, e - b, <int32_t>i)
        p.scores[i] = sc[i]
        low = sc[i] if sc[i] < low else low
        p.chars[i] = <int32_t>_n_chars(v.values + b, e - b)
        p.max_chars = max(p.max_chars, p.chars[i])
    p.unk_score = low - UNK_PENALTY
    return 0


cdef class WordLattices:
    """The lattice nodes of every word, found once with the seed pieces' trie and kept as each
    node's piece, position by position (the nodes starting at a position, by length), so that an
    E step or a Viterbi pass reads each word's nodes instead of searching a trie; `keep` follows
    the pieces as EM and pruning drop them. Only the pieces can change: a position's nodes are its
    current pieces in order of length, and the unknown node where no one-character piece is left.
    The nodes are counted before they are stored, so that every array is allocated once at its size."""
    cdef vector[int32_t] ids        # per node: its piece
    cdef vector[uint16_t] starting  # per character position of the words: how many nodes start there
    cdef vector[int64_t] word_pos   # per word: its first character position (+ the end)
    cdef vector[int64_t] word_node  # per word: its first node (+ the end)
    cdef vector[int64_t] counts     # per word
    cdef vector[int32_t] piece_chars  # per piece: its length in characters
    cdef object words               # the words (the row driver shares them out by their bytes)

    def __init__(self, pieces, scores, words, counts, int threads=1):
        """The nodes of the (large_)string/binary `words`, weighted by int64 `counts`, for `pieces`,
        found on `threads` threads (each counts, then stores, the nodes of a run of words)."""
        cdef Pieces p
        cdef list keep = []
        _load_pieces(p, pieces, scores)
        if p.max_chars > 0xFFFF:
            raise ValueError(f"a piece of {p.max_chars} characters is longer than a lattice node can be")
        cdef BinaryView w = binary_view(words, keep)
        cdef const int64_t* n = int64_values(counts, keep)
        cdef int n_threads = max(1, min(threads, <int>(w.length // 64) + 1))
        cdef vector[Lattice] lats = vector[Lattice](n_threads)
        cdef int64_t i
        cdef int t
        self.piece_chars = p.chars
        with nogil:
            self.word_pos.resize(w.length + 1)
            self.word_node.resize(w.length + 1)
            self.counts.assign(n, n + w.length)
            self.word_pos[0] = 0
            for i in range(w.length):
                self.word_pos[i + 1] = self.word_pos[i] + _n_chars(w.values + view_start(w, i),
                                                                   view_end(w, i) - view_start(w, i))
            self.starting.resize(self.word_pos[w.length])
        if w.length:
            for t in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
                self._find(lats[t], p, w, t * w.length // n_threads, (t + 1) * w.length // n_threads, False)
        with nogil:
            self.word_node[0] = 0
            for i in range(w.length):
                self.word_node[i + 1] += self.word_node[i]
            self.ids.resize(self.word_node[w.length])
        if w.length:
            for t in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
                self._find(lats[t], p, w, t * w.length // n_threads, (t + 1) * w.length // n_threads, True)
        self.words = words

    cdef void _find(self, Lattice& lat, const Pieces& p, const BinaryView& w, int64_t lo, int64_t hi,
                    bint store) noexcept nogil:
        """The nodes of words lo..hi-1: how many start at each position and in each word (in
        `word_node[i + 1]`, summed later), or, once summed, their pieces (`store`)."""
        cdef int64_t i, pos, node, start
        for i in range(lo, hi):
            _build(lat, p, w.values + view_start(w, i), view_end(w, i) - view_start(w, i), False)
            if store:
                start = self.word_node[i] - 2
                for node in range(2, <int64_t>lat.node_pos.size()):
                    self.ids[start + node] = lat.node_id[node]
            else:
                start = self.word_pos[i]
                for pos in range(lat.length):
                    self.starting[start + pos] = <uint16_t>(lat.begin_start[pos + 1] - lat.begin_start[pos])
                self.word_node[i + 1] = <int64_t>lat.node_pos.size() - 2

    def keep(self, index, int threads=1) -> None:
        """Follow the pieces to `[old piece index[k] for k]`: nodes of other pieces go, the rest are
        renumbered, on `threads` threads (each compacts a run of words in place, then the runs are
        moved together)."""
        cdef const int64_t[:] idx = np.ascontiguousarray(index, dtype=np.int64)
        cdef vector[int32_t] renumber, chars
        cdef int64_t k, word, out, shift, n_words = <int64_t>self.counts.size()
        cdef int32_t n_pieces = <int32_t>self.piece_chars.size()
        cdef int n_threads = max(1, min(threads, <int>(n_words // 64) + 1)), t
        cdef vector[int64_t] kept = vector[int64_t](n_threads)
        cdef vector[int64_t] source = vector[int64_t](n_threads)  # each run's first node before
        if idx.shape[0] == n_pieces and np.array_equal(index, np.arange(n_pieces)):
            return  # every piece stays where it was
        renumber.assign(n_pieces, -1)
        chars.resize(idx.shape[0])
        for k in range(idx.shape[0]):
            renumber[idx[k]] = <int32_t>k
            chars[k] = self.piece_chars[idx[k]]
        for t in range(n_threads):
            source[t] = self.word_node[t * n_words // n_threads]
        for t in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
            kept[t] = self._compact(renumber.data(), t * n_words // n_threads, (t + 1) * n_words // n_threads,
                                    source[t])
        with nogil:
            out = kept[0]
            for t in range(1, n_threads):
                shift = source[t] - out
                if shift:
                    memmove(self.ids.data() + out, self.ids.data() + source[t], kept[t] * sizeof(int32_t))
                    for word in range(t * n_words // n_threads, (t + 1) * n_words // n_threads):
                        self.word_node[word] -= shift
                out += kept[t]
            self.word_node[n_words] = out
            self.ids.resize(out)  # in place: a smaller copy would be alive beside them
        self.piece_chars.swap(chars)

    cdef int64_t _compact(self, const int32_t* renumber, int64_t lo, int64_t hi, int64_t m) noexcept nogil:
        """Words lo..hi-1, whose nodes start at node m, keep the nodes of pieces left (renumbered),
        moved to the front of their run; how many."""
        cdef int64_t word, pos, out = m, first = m
        cdef int32_t piece, c, j, kept
        for word in range(lo, hi):
            self.word_node[word] = out
            for pos in range(self.word_pos[word], self.word_pos[word + 1]):
                c = self.starting[pos]
                kept = 0
                for j in range(c):
                    piece = renumber[self.ids[m + j]]
                    if piece >= 0:
                        self.ids[out] = piece
                        out += 1
                        kept += 1
                m += c
                self.starting[pos] = <uint16_t>kept
        return out - first

    @property
    def nodes(self) -> int:
        """The lattices' piece nodes (unknown nodes not counted)."""
        return self.ids.size()

    cdef int32_t _best_path(self, Lattice& lat, const PieceNode* pieces, float unk_score, int64_t word) noexcept nogil:
        """SentencePiece's Viterbi over word `word`, read from its stored nodes: the last node of the
        best path (-1: none), each node's predecessor in `lat.prev` (-1: BOS). Nodes are numbered
        within the word: its stored nodes in order, then position pos's unknown node as W + pos.

        SentencePiece gives a node starting at pos the first node ending there with the highest
        backtrace + score (float32). That best score is the best backtrace + score, as rounding is
        monotonic, and its node the first of highest backtrace unless an earlier node's backtrace
        rounds to the same sum: then (rarely) the nodes ending there are searched in their order."""
        cdef int64_t base = self.word_pos[word], m, m0, m1, mb = self.word_node[word]
        cdef int32_t length = <int32_t>(self.word_pos[word + 1] - base), pos
        cdef int32_t n_stored = <int32_t>(self.word_node[word + 1] - mb)
        cdef const uint16_t* starting = self.starting.data() + base
        cdef const int32_t* ids = self.ids.data()
        cdef PieceNode node
        lat.backtrace.resize(n_stored + length)
        lat.prev.resize(n_stored + length)
        lat.best_score.assign(length + 1, -INFINITY)  # per position: the best backtrace ending there
        lat.runner_up.assign(length + 1, -INFINITY)   # and the best of the nodes before that one
        lat.best_node.assign(length + 1, -2)          # and its node (-2: none yet)
        lat.best_score[0] = 0
        lat.best_node[0] = -1                          # BOS
        m = mb
        for pos in range(length):
            m0, m1 = m, m + starting[pos]
            while m < m1:
                node = pieces[ids[m]]
                self._relax(lat, pieces, starting, mb, n_stored, pos, <int32_t>(m - mb), node.score, pos + node.chars)
                m += 1
            if m0 == m1 or pieces[ids[m0]].chars != 1:
                self._relax(lat, pieces, starting, mb, n_stored, pos, n_stored + pos, unk_score, pos + 1)
        return lat.best_node[length] if length > 0 else -1

    cdef inline void _relax(self, Lattice& lat, const PieceNode* pieces, const uint16_t* starting, int64_t mb,
                            int32_t n_stored, int32_t pos, int32_t j, float score, int32_t e) noexcept nogil:
        """Node j (from pos to e, `score`) of `_best_path`: its backtrace and predecessor, and the best
        path ending at e."""
        cdef float t = lat.best_score[pos] + score
        cdef int32_t prev = lat.best_node[pos]
        if lat.runner_up[pos] + score == t:
            prev = self._first_ending(lat, pieces, starting, mb, n_stored, pos, score, t)
        lat.backtrace[j] = t
        lat.prev[j] = prev
        if lat.best_node[e] == -2 or t > lat.best_score[e]:
            lat.runner_up[e] = lat.best_score[e]
            lat.best_score[e] = t
            lat.best_node[e] = j

    cdef int32_t _first_ending(self, const Lattice& lat, const PieceNode* pieces, const uint16_t* starting,
                               int64_t mb, int32_t n_stored, int32_t pos, float score, float t) noexcept nogil:
        """The first node ending at `pos`, in SentencePiece's order (by start), whose backtrace +
        `score` is `t`."""
        cdef int32_t q
        cdef int64_t m = mb, m0, m1
        cdef const int32_t* ids = self.ids.data()
        for q in range(pos):
            m0, m1 = m, m + starting[q]
            while m < m1:
                if q + pieces[ids[m]].chars == pos and lat.backtrace[m - mb] + score == t:
                    return <int32_t>(m - mb)
                m += 1
            if q + 1 == pos and (m0 == m1 or pieces[ids[m0]].chars != 1) and lat.backtrace[n_stored + q] + score == t:
                return n_stored + q
        return -1

    cdef float _expect(self, Lattice& lat, const PieceNode* pieces, float unk_score, int64_t word, float* out,
                       vector[double]& values) noexcept nogil:
        """Forward-backward over word `word`, read straight from its stored nodes (no lattice built):
        freq x marginal of each node, in node order, added to its piece's total in `out`, or (out
        NULL) appended to `values`; returns freq x log Z.

        SentencePiece computes alpha of each node starting at a position from the nodes ending there,
        and beta of each node ending at a position from the nodes starting there: the same sum in the
        same order for every such node, so here it is computed once per position. The nodes ending
        at a position are added to its alpha in the order of their starts, which is the order of
        SentencePiece's list of them, so every sum rounds as there. A sum starts at -inf, from which
        `_log_sum_exp` gives its first term exactly, as SentencePiece's first-term case does."""
        cdef int64_t base = self.word_pos[word], m, m0, m1
        cdef int32_t length = <int32_t>(self.word_pos[word + 1] - base), pos, e
        cdef const uint16_t* starting = self.starting.data() + base
        cdef const int32_t* ids = self.ids.data()
        cdef float a, z, v, freq = <float>self.counts[word]
        cdef double value
        cdef PieceNode node
        lat.alpha.assign(length + 1, -INFINITY)  # per position: alpha of the nodes starting there
        lat.beta.resize(length + 1)              # per position: beta of the nodes ending there
        cdef float* alpha = lat.alpha.data()
        cdef float* beta = lat.beta.data()
        alpha[0] = 0
        beta[length] = 0
        m = self.word_node[word]
        for pos in range(length):
            a = alpha[pos]
            m0, m1 = m, m + starting[pos]
            while m < m1:
                node = pieces[ids[m]]
                e = pos + node.chars
                alpha[e] = _log_sum_exp(alpha[e], node.score + a)
                m += 1
            if m0 == m1 or pieces[ids[m0]].chars != 1:
                alpha[pos + 1] = _log_sum_exp(alpha[pos + 1], unk_score + a)
        pos = length - 1
        while pos >= 0:
            m0, m1 = m - starting[pos], m
            a = -INFINITY
            for m in range(m0, m1):
                node = pieces[ids[m]]
                a = _log_sum_exp(a, node.score + beta[pos + node.chars])
            if m0 == m1 or pieces[ids[m0]].chars != 1:
                a = _log_sum_exp(a, unk_score + beta[pos + 1])
            beta[pos] = a
            m = m0
            pos -= 1
        z = alpha[length]
        for pos in range(length):
            m0, m1 = m, m + starting[pos]
            while m < m1:
                node = pieces[ids[m]]
                v = alpha[pos] + node.score + beta[pos + node.chars] - z
                value = <double>freq * exp(<double>v)
                if out != NULL:
                    _add(out, ids[m], value)
                else:
                    values.push_back(value)
                m += 1
            if m0 == m1 or pieces[ids[m0]].chars != 1:
                v = alpha[pos] + unk_score + beta[pos + 1] - z
                value = <double>freq * exp(<double>v)
                if out != NULL:
                    _add(out, 0, value)
                else:
                    values.push_back(value)
        return freq * z

    cdef void _rows(self, Sweep& s, int thread, int part, int64_t first, int64_t last) noexcept nogil:
        """Words first..last-1 for part `part`: the first part (the first words, thread 0's) adds to
        the totals at once, the others keep what they find for `_add_part`."""
        cdef Lattice* lat = &s.lats[thread]
        cdef Part* p = &s.parts[part]
        cdef float* out = s.out if part == 0 else NULL
        cdef float z
        cdef int64_t i, first_stored
        cdef int32_t node, piece, n_stored
        if p.first == p.last:
            p.first = first
        p.last = last
        for i in range(first, last):
            if s.expect:
                z = self._expect(lat[0], s.pieces, s.unk_score, i, out, p.values)
                if z != z:
                    s.nan[thread] = 1
            else:
                node = self._best_path(lat[0], s.pieces, s.unk_score, i)
                first_stored = self.word_node[i]
                n_stored = <int32_t>(self.word_node[i + 1] - first_stored)
                while node >= 0:
                    piece = self.ids[first_stored + node] if node < n_stored else 0
                    if out != NULL:
                        out[piece] += <float>self.counts[i]
                    else:
                        p.ids.push_back(piece)
                        p.values.push_back(<double>self.counts[i])
                    node = lat.prev[node]

    cdef void _add_part(self, const Part& p, float* out, bint expect) noexcept nogil:
        """Add a kept part to the totals, its nodes in the order `_rows` met them."""
        cdef int64_t pos, m, m0, m1, j = 0
        if not expect:
            for j in range(<int64_t>p.ids.size()):
                out[p.ids[j]] += <float>p.values[j]
            return
        m = self.word_node[p.first]
        for pos in range(self.word_pos[p.first], self.word_pos[p.last]):
            m0, m1 = m, m + self.starting[pos]
            while m < m1:
                _add(out, self.ids[m], p.values[j])
                j += 1
                m += 1
            if m0 == m1 or self.piece_chars[self.ids[m0]] != 1:
                _add(out, 0, p.values[j])
                j += 1

    cdef object _sweep(self, scores_arr, int threads, bint expect, int64_t block_nodes):
        """Both passes' driver: block after block of about `block_nodes` nodes, the words of a
        block shared among threads by the row driver; thread 0's own run (the block's first words)
        adds to the float32 totals as it goes, every other part after it, in word order, so that
        every sum rounds as in one thread, and what the parts keep follows one block, not all words."""
        cdef const float[:] sc = np.ascontiguousarray(scores_arr, dtype=np.float32)
        cdef int64_t n_pieces = <int64_t>self.piece_chars.size()
        if sc.shape[0] != n_pieces:
            raise ValueError(f"{sc.shape[0]} scores for {n_pieces} pieces")
        out_arr = np.zeros(n_pieces, dtype=np.float32)
        cdef float[:] out = out_arr
        cdef Sweep s
        cdef RowRun run
        cdef list keep
        cdef int64_t i, start, end, n_words = <int64_t>self.counts.size()
        cdef size_t k
        cdef float low = 3.4028234663852886e38
        cdef vector[PieceNode] pieces = vector[PieceNode](n_pieces)
        for i in range(n_pieces):
            low = sc[i] if sc[i] < low else low
            pieces[i].score = sc[i]
            pieces[i].chars = self.piece_chars[i]
        cdef vector[Part] parts
        cdef vector[Lattice] lats = vector[Lattice](max(threads, 1))
        cdef vector[int] nan = vector[int](max(threads, 1), 0)
        s.lattices = <void*>self
        s.pieces = pieces.data()
        s.unk_score = low - UNK_PENALTY
        s.expect = expect
        s.out = &out[0] if out.shape[0] else NULL
        s.lats = lats.data()
        s.nan = nan.data()
        start = 0
        while start < n_words:
            end = start + 1
            while end < n_words and self.word_node[end] - self.word_node[start] < block_nodes:
                end += 1
            keep = []
            rows_open(run, self.words[start:end], keep, threads, True)
            parts.clear()
            parts.resize(run.parts)
            s.parts = parts.data()
            s.offset = start
            rows_run(run, _sweep_rows, NULL, &s)
            with nogil:
                for k in range(1, run.order.size()):
                    self._add_part(parts[run.order[k]], s.out, expect)
            start = end
        if any(nan):
            raise ValueError("likelihood is NaN: a text may be too long")
        return out_arr

    def e_step(self, scores, int threads=1, int64_t block_nodes=SWEEP_BLOCK_NODES):
        """The expected count of each piece (float32): forward-backward over every word, in blocks
        of about `block_nodes` nodes (the memory the threads keep follows it, the result does not)."""
        return self._sweep(scores, threads, True, block_nodes)

    def viterbi_counts(self, scores, int threads=1, int64_t block_nodes=SWEEP_BLOCK_NODES):
        """The count of each piece on the words' best paths (float32), in blocks as `e_step`."""
        return self._sweep(scores, threads, False, block_nodes)


cdef int64_t _sweep_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                         int64_t last) noexcept nogil:
    """Words [first, last) into part `part` (nothing fails: -1)."""
    cdef Sweep* s = <Sweep*>task
    (<WordLattices>s.lattices)._rows(s[0], thread, part, s.offset + first, s.offset + last)
    return -1


def reachable(pieces, scores):
    """uint8 per piece: 0 where a segmentation of its text into other pieces scores higher than the
    piece itself, so that no best path can use it."""
    cdef Pieces p
    _load_pieces(p, pieces, scores)
    cdef list keep_alive = []
    cdef BinaryView v = binary_view(pieces, keep_alive)
    keep_arr = np.zeros(v.length, dtype=np.uint8)
    cdef uint8_t[:] keep = keep_arr
    cdef Lattice lat
    cdef int64_t i
    cdef int32_t node, self_node
    cdef float own
    with nogil:
        for i in range(v.length):
            _build(lat, p, v.values + view_start(v, i), view_end(v, i) - view_start(v, i), True)
            _index_ends(lat)
            self_node = -1
            for node in range(lat.begin_start[0], lat.begin_start[1] if lat.length > 0 else lat.begin_start[0]):
                if lat.node_id[node] == i and lat.node_len[node] == lat.length:
                    self_node = node
                    break
            if self_node < 0:
                continue
            own = lat.node_score[self_node]
            lat.node_score[self_node] = -INFINITY
            _viterbi(lat)
            keep[i] = not (lat.backtrace[1] > own)
    return keep_arr


cdef struct Hypothesis:
    int32_t node
    int32_t next
    float fx
    float gx


cdef inline bint _less(const vector[Hypothesis]& h, int32_t a, int32_t b) noexcept nogil:
    return h[a].fx < h[b].fx


cdef void _heap_push(vector[int32_t]& heap, const vector[Hypothesis]& h, int32_t value) noexcept nogil:
    """std::push_heap on a max-heap by fx."""
    heap.push_back(value)
    cdef int64_t hole = <int64_t>heap.size() - 1, parent = (hole - 1) // 2
    while hole > 0 and _less(h, heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value


cdef int32_t _heap_pop(vector[int32_t]& heap, const vector[Hypothesis]& h) noexcept nogil:
    """std::pop_heap then pop_back: returns the top."""
    cdef int32_t top = heap[0], value
    cdef int64_t length = <int64_t>heap.size() - 1, hole = 0, second = 0, parent
    if length == 0:
        heap.pop_back()
        return top
    value = heap[length]
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if _less(h, heap[second], heap[second - 1]):
            second -= 1
        heap[hole] = heap[second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        heap[hole] = heap[second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > 0 and _less(h, heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value
    heap.pop_back()
    return top


cdef int _two_best(Lattice& lat, vector[Hypothesis]& hyps, vector[int32_t]& heap, vector[int32_t]& second) noexcept nogil:
    """How many nodes the best path has (0: only one path), the second-best path's nodes in `second`."""
    cdef Hypothesis hyp
    cdef int32_t top, node, j, l, k, found = 0, best_size = 0
    _viterbi(lat)
    hyps.clear()
    heap.clear()
    second.clear()
    hyp.node, hyp.next, hyp.gx, hyp.fx = 1, -1, 0, lat.backtrace[1]
    hyps.push_back(hyp)
    _heap_push(heap, hyps, 0)
    while heap.size():
        top = _heap_pop(heap, hyps)
        node = hyps[top].node
        if node == 0:
            found += 1
            k = hyps[top].next
            if found == 1:
                while hyps[k].next >= 0:
                    best_size += 1
                    k = hyps[k].next
            else:
                while hyps[k].next >= 0:
                    second.push_back(lat.node_id[hyps[k].node])
                    k = hyps[k].next
                return best_size
            continue
        for j in range(lat.end_start[lat.node_pos[node]], lat.end_start[lat.node_pos[node] + 1]):
            l = lat.end_nodes[j]
            hyp.node = l
            hyp.gx = lat.node_score[l] + hyps[top].gx
            hyp.fx = lat.backtrace[l] + hyps[top].gx
            hyp.next = top
            hyps.push_back(hyp)
            _heap_push(heap, hyps, <int32_t>hyps.size() - 1)
    return 0


cdef struct BestScratch:         # one thread's share of `second_best`
    Lattice lat
    vector[Hypothesis] hyps
    vector[int32_t] heap
    vector[int32_t] second
    vector[int32_t] alt          # its pieces' second-best paths, one after the other


cdef void _second_best_range(const Pieces& p, const BinaryView& v, int64_t lo, int64_t hi, BestScratch& b,
                             uint8_t* keep, int32_t* sizes) noexcept nogil:
    """`second_best` of pieces lo..hi-1: keep[i], and the size of each one's alternative in `sizes`
    (its pieces appended to b.alt)."""
    cdef int64_t i
    cdef int best
    for i in range(lo, hi):
        _build(b.lat, p, v.values + view_start(v, i), view_end(v, i) - view_start(v, i), True)
        _index_ends(b.lat)
        best = _two_best(b.lat, b.hyps, b.heap, b.second)
        if best >= 2:
            keep[i] = 0
        elif best == 1:
            b.alt.insert(b.alt.end(), b.second.begin(), b.second.end())
            sizes[i] = <int32_t>b.second.size()


def second_best(pieces, scores, int threads=1):
    """For each piece, from the two best paths of its own text: (keep, offsets, alternatives) where
    keep[i] is 0 when its best path splits it (it can go), and alternatives[offsets[i]:offsets[i+1]]
    are the pieces of the second-best path where the piece is its own best path (empty when there
    is none). The pieces are shared among `threads` threads in runs; the result does not depend on it."""
    cdef Pieces p
    _load_pieces(p, pieces, scores)
    cdef list keep_alive = []
    cdef BinaryView v = binary_view(pieces, keep_alive)
    keep_arr = np.ones(v.length, dtype=np.uint8)
    cdef uint8_t[:] keep = keep_arr
    sizes_arr = np.zeros(v.length, dtype=np.int32)
    cdef int32_t[:] sizes = sizes_arr
    cdef int n_threads = max(1, min(threads, <int>(v.length // 64) + 1))
    cdef vector[BestScratch] scratch = vector[BestScratch](n_threads)
    cdef int t
    if v.length:
        for t in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
            _second_best_range(p, v, t * v.length // n_threads, (t + 1) * v.length // n_threads, scratch[t],
                               &keep[0], &sizes[0])
    offsets_arr = np.zeros(v.length + 1, dtype=np.int32)
    np.cumsum(sizes_arr, out=offsets_arr[1:])
    values = np.concatenate([np.asarray(<int32_t[:scratch[t].alt.size()]>scratch[t].alt.data()).copy()
                             if scratch[t].alt.size() else np.zeros(0, np.int32) for t in range(n_threads)])
    return keep_arr, offsets_arr, values
