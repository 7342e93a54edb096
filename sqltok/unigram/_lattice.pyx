# cython: language_level=3
"""The Unigram trainer's loops over the lattice of a text (one node per vocabulary piece that starts
at a character, an unknown node where no one-character piece does), in SentencePiece's float32
arithmetic and its node order, so that sums round as they do there:

- `e_step`: forward-backward over every word, each piece's expected count (the E step);
- `viterbi_counts`: each piece's count on the best paths of every word (pruning);
- `reachable`: whether a piece's own text has a better path without it (final clean-up);
- `second_best`: the best and the second-best path of each piece's own text (A* search, the agenda
  a binary heap ordered as the C++ standard library's, which decides between equal scores).

Unknown nodes count for piece 0, as the C++ trainer's do (its unknown id is 0). The GIL is
released over the words.
"""
from cython.operator cimport dereference as deref
from libc.math cimport INFINITY, exp, log1p
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np
from cython.parallel cimport prange

from sqltok.unigram.piece_trie cimport PieceTrie, trie_child, trie_init, trie_insert
from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_values, view_end, view_start

cdef float UNK_PENALTY = 10.0


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
    int32_t length               # characters


cdef struct Pieces:
    PieceTrie trie
    vector[float] scores
    int32_t max_chars
    float unk_score


cdef struct Contribution:
    int32_t id
    double value


cdef struct Block:
    Lattice lat
    vector[Contribution] out
    float obj
    bint nan


cdef inline int64_t _char_len(uint8_t b) noexcept nogil:
    if b < 0x80:
        return 1
    if b < 0xE0:
        return 2
    if b < 0xF0:
        return 3
    return 4


cdef void _build(Lattice& lat, const Pieces& pieces, const uint8_t* s, int64_t n) noexcept nogil:
    """The lattice of s[:n] with its nodes in SentencePiece's insertion order."""
    cdef int64_t i = 0, k, b, count
    cdef int32_t length, pos, node, e
    cdef bint single
    cdef int32_t trie_node
    lat.surface.clear()
    while i < n:
        lat.surface.push_back(i)
        k = _char_len(s[i])
        i = i + k if i + k <= n else n
    lat.surface.push_back(n)
    length = <int32_t>lat.surface.size() - 1
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
                lat.node_pos.push_back(pos)
                lat.node_len.push_back(<int32_t>k)
                lat.node_id.push_back(pieces.trie.values[trie_node])
                lat.node_score.push_back(pieces.scores[pieces.trie.values[trie_node]])
                if k == 1:
                    single = True
        if not single:
            lat.node_pos.push_back(pos)
            lat.node_len.push_back(1)
            lat.node_id.push_back(0)
            lat.node_score.push_back(pieces.unk_score)
    lat.begin_start[length] = <int32_t>lat.node_pos.size()
    # nodes ending at each position, in insertion order (BOS ends at 0)
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


cdef inline float _log_sum_exp(float x, float y, bint init) noexcept nogil:
    cdef float vmin, vmax
    if init:
        return y
    vmin = x if x < y else y
    vmax = y if x < y else x
    if vmax > vmin + <float>50.0:
        return vmax
    return <float>(<double>vmax + log1p(exp(<double>(vmin - vmax))))


cdef float _marginals(Lattice& lat, float freq, vector[Contribution]& out) noexcept nogil:
    """Forward-backward: append (piece, freq x marginal) of each node, in node order; returns freq x log Z."""
    cdef int32_t length = lat.length, pos, r, l, j, k, n_nodes = <int32_t>lat.node_pos.size()
    cdef float z, v
    cdef Contribution c
    lat.alpha.assign(n_nodes, 0)
    lat.beta.assign(n_nodes, 0)
    for pos in range(length + 1):
        for r in range(_begin_first(lat, pos), _begin_last(lat, pos)):
            for j in range(lat.end_start[pos], lat.end_start[pos + 1]):
                l = lat.end_nodes[j]
                lat.alpha[r] = _log_sum_exp(lat.alpha[r], lat.node_score[l] + lat.alpha[l], j == lat.end_start[pos])
    pos = length
    while pos >= 0:
        for j in range(lat.end_start[pos], lat.end_start[pos + 1]):
            l = lat.end_nodes[j]
            for r in range(_begin_first(lat, pos), _begin_last(lat, pos)):
                lat.beta[l] = _log_sum_exp(lat.beta[l], lat.node_score[r] + lat.beta[r], r == _begin_first(lat, pos))
        pos -= 1
    z = lat.alpha[1]
    for k in range(2, n_nodes):
        v = lat.alpha[k] + lat.node_score[k] + lat.beta[k] - z
        c.id = lat.node_id[k]
        c.value = <double>freq * exp(<double>v)
        out.push_back(c)
    return freq * z


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
    cdef int64_t i, n_chars, j, b, e
    cdef float low = 3.4028234663852886e38
    trie_init(p.trie)
    p.scores.resize(v.length)
    p.max_chars = 1
    for i in range(v.length):
        b, e = view_start(v, i), view_end(v, i)
        trie_insert(p.trie, v.values + b, e - b, <int32_t>i)
        p.scores[i] = sc[i]
        low = sc[i] if sc[i] < low else low
        n_chars = 0
        j = b
        while j < e:
            j += _char_len(v.values[j])
            n_chars += 1
        p.max_chars = max(p.max_chars, <int32_t>n_chars)
    p.unk_score = low - UNK_PENALTY
    return 0


cdef enum:
    BLOCK_WORDS = 2048


cdef struct Words:
    BinaryView w
    const int64_t* n


cdef list _open_words(Pieces& p, Words& ws, object pieces, object scores, object words, object counts):
    """Load the pieces and view the words and their counts; returns what keeps the views alive."""
    cdef list keep = []
    _load_pieces(p, pieces, scores)
    ws.w = binary_view(words, keep)
    ws.n = int64_values(counts, keep)
    return keep


cdef void _e_block(Block& blk, const Pieces& p, const BinaryView& w, const int64_t* n, int64_t first, int64_t last,
                   int64_t total) noexcept nogil:
    cdef int64_t i
    cdef float z
    blk.out.clear()
    for i in range(first, last):
        _build(blk.lat, p, w.values + view_start(w, i), view_end(w, i) - view_start(w, i))
        z = _marginals(blk.lat, <float>n[i], blk.out)
        if z != z:
            blk.nan = True
        blk.obj -= z / total


def e_step(pieces, scores, words, counts, int threads=1):
    """(expected count of each piece as float32, objective): forward-backward over each word of the
    (large_)string/binary array `words`, weighted by int64 `counts`. Blocks of words run on `threads`
    threads; their contributions are added to the counts in word order, so that every sum rounds as
    in one thread."""
    cdef Pieces p
    cdef Words ws
    cdef list keep = _open_words(p, ws, pieces, scores, words, counts)
    expected_arr = np.zeros(len(pieces), dtype=np.float32)
    cdef float[:] expected = expected_arr
    cdef vector[Block] blocks
    cdef int64_t i, start, total = 0, t, nt = max(1, threads)
    cdef size_t j
    cdef float obj = 0
    cdef bint nan = False
    blocks.resize(nt)
    with nogil:
        for i in range(ws.w.length):
            total += ws.n[i]
        start = 0
        while start < ws.w.length:
            for t in prange(nt, num_threads=nt, schedule="static", chunksize=1):
                _e_block(blocks[t], p, ws.w, ws.n, min(start + t * BLOCK_WORDS, ws.w.length),
                         min(start + (t + 1) * BLOCK_WORDS, ws.w.length), total)
            for t in range(nt):
                for j in range(blocks[t].out.size()):
                    expected[blocks[t].out[j].id] = <float>(<double>expected[blocks[t].out[j].id] +
                                                            blocks[t].out[j].value)
                nan = nan or blocks[t].nan
            start += nt * BLOCK_WORDS
    for t in range(nt):
        obj += blocks[t].obj
    if nan:
        raise ValueError("likelihood is NaN: a text may be too long")
    return expected_arr, obj


def viterbi_counts(pieces, scores, words, counts):
    """The count of each piece on the words' best paths (float32)."""
    cdef Pieces p
    cdef Words ws
    cdef list keep = _open_words(p, ws, pieces, scores, words, counts)
    freq_arr = np.zeros(len(pieces), dtype=np.float32)
    cdef float[:] freq = freq_arr
    cdef Lattice lat
    cdef int64_t i
    cdef int32_t node
    with nogil:
        for i in range(ws.w.length):
            _build(lat, p, ws.w.values + view_start(ws.w, i), view_end(ws.w, i) - view_start(ws.w, i))
            _viterbi(lat)
            node = lat.prev[1]
            while lat.prev[node] >= 0:
                freq[lat.node_id[node]] += ws.n[i]
                node = lat.prev[node]
    return freq_arr


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
            _build(lat, p, v.values + view_start(v, i), view_end(v, i) - view_start(v, i))
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


def second_best(pieces, scores):
    """For each piece, from the two best paths of its own text: (keep, alternatives) where keep[i]
    is 0 when its best path splits it (it can go), and alternatives is a list<int32> array of the
    pieces of the second-best path where the piece is its own best path (empty when there is none)."""
    cdef Pieces p
    _load_pieces(p, pieces, scores)
    cdef list keep_alive = []
    cdef BinaryView v = binary_view(pieces, keep_alive)
    keep_arr = np.ones(v.length, dtype=np.uint8)
    cdef uint8_t[:] keep = keep_arr
    offsets_arr = np.zeros(v.length + 1, dtype=np.int32)
    cdef int32_t[:] offsets = offsets_arr
    cdef vector[int32_t] alt, second, heap
    cdef vector[Hypothesis] hyps
    cdef Lattice lat
    cdef int64_t i
    cdef int best
    with nogil:
        for i in range(v.length):
            _build(lat, p, v.values + view_start(v, i), view_end(v, i) - view_start(v, i))
            best = _two_best(lat, hyps, heap, second)
            if best >= 2:
                keep[i] = 0
            elif best == 1:
                alt.insert(alt.end(), second.begin(), second.end())
            offsets[i + 1] = <int32_t>alt.size()
    values = np.asarray(<int32_t[:alt.size()]>alt.data()).copy() if alt.size() else np.zeros(0, np.int32)
    return keep_arr, offsets_arr, values
