# cython: language_level=3
"""Backtracking BPE: the ids of a pretoken without running the merge loop, for vocabularies where it
is exact (the technique of GitHub's rust-gems `bpe` crate, written here from its description).

Two facts make it work. (1) A sequence of tokens is the BPE encoding of its bytes exactly when every
token is reachable (its own bytes merge into it) and every adjacent pair is a valid boundary (the
bytes of the two alone merge into those two): the first merge across a boundary of the whole text
would happen in that pair alone too. (2) Whether a pair is valid follows from each token's last
merge (its split): undo the later-formed of the two, look up the pair at the new boundary, and fail
when it merges before the merge just undone would happen, down to two single bytes (`valid_pair`).
So the encoder takes the longest token that is a prefix of the rest (a trie walk), keeps it when it
is valid after its predecessor and does not end where no encoding can continue, else tries the next
shorter prefix token; when none is left, it marks the position dead and takes back its predecessor.

Exact when every merge forms its token after the tokens it joins (the result's rank is above the
ranks that formed both parts: `backtrack_build` checks it) and only final pairs are in the merge
table (the encoder keeps those), without a rank guard. Otherwise `usable` is False."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.algorithm cimport sort
from libcpp.utility cimport pair
from libcpp.vector cimport vector

from sqltok.bpe.merge_scan cimport NO_RANK
from sqltok.bpe.merge_table cimport MergeTable, merge_table_rank
from sqltok.native.huge_pages cimport SqltokHugeAllocator
from sqltok.native.id_lists cimport IdVector


cdef enum:
    NODE_LIMIT = 1 << 24        # trie node ids fit in 24 bits (with the byte: one uint32 key)
    NO_EDGE = 0xFFFFFFFF
    LEAF = 1 << 30              # flag of a child node that has no children (the walk stops there)
    PAIR_MEMO = 8192            # a thread's memo of pairs checked (64 KiB: stays in cache)


cdef struct TrieEdge:           # parent node << 8 | byte -> child node (| LEAF)
    uint32_t key
    int32_t child


cdef cppclass Backtrack:
    bint usable
    int32_t n_tokens            # nodes below this id are tokens (the node of reachable token t is t)
    int32_t root[256]           # the node of each byte, -1: none
    vector[int32_t] root2       # the node (| LEAF) of each pair of bytes (a << 8 | b), -1: none (256 KiB, cached)
    vector[TrieEdge, SqltokHugeAllocator[TrieEdge]] edges  # read at random: on huge pages
    uint64_t mask
    int shift
    size_t used                 # edges held (the table doubles past a load of 5/8)
    vector[int32_t] length      # bytes of each token
    vector[int32_t] formed      # the rank of the merge that forms each token; -1: a byte's token
    vector[int32_t] left        # its split: the two tokens that merge into it (a byte: itself)
    vector[int32_t] right
    vector[int32_t] shorter     # the longest reachable token that is a proper prefix of it, -1: none


cdef cppclass BacktrackScratch:  # a thread's
    vector[uint64_t] dead       # bits: positions of the pretoken at hand where no encoding continues
    vector[uint64_t] memo       # pairs checked: x << 32 | y << 1 | valid (~0: empty)


cdef inline uint64_t _edge_slot(const Backtrack& b, uint32_t key) noexcept nogil:
    return (<uint64_t>key * <uint64_t>0x9E3779B97F4A7C15ULL) >> b.shift


cdef inline int32_t _child(const Backtrack& b, int32_t node, uint8_t byte) noexcept nogil:
    cdef uint32_t key = (<uint32_t>node << 8) | byte
    cdef uint64_t j = _edge_slot(b, key)
    cdef const TrieEdge* e
    while True:
        e = &b.edges[j]
        if e.key == key:
            return e.child
        if e.key == NO_EDGE:
            return -1
        j = (j + 1) & b.mask


cdef inline void _edges_init(Backtrack& b, int bits) noexcept nogil:
    """An empty edge table of 2^bits slots."""
    cdef TrieEdge empty
    empty.key = NO_EDGE
    empty.child = -1
    b.edges.assign(<size_t>1 << bits, empty)
    b.mask = (<uint64_t>1 << bits) - 1
    b.shift = 64 - bits
    b.used = 0


cdef inline void _put_edge(Backtrack& b, uint32_t key, int32_t child) noexcept nogil:
    cdef uint64_t j = _edge_slot(b, key)
    while b.edges[j].key != NO_EDGE:
        j = (j + 1) & b.mask
    b.edges[j].key = key
    b.edges[j].child = child
    b.used += 1


cdef inline int32_t _add_child(Backtrack& b, int32_t node, uint8_t byte, int32_t child) noexcept nogil:
    """The child of `node` by `byte`, made `child` when there is none."""
    cdef uint32_t key = (<uint32_t>node << 8) | byte
    cdef int32_t found = _child(b, node, byte)
    cdef vector[TrieEdge, SqltokHugeAllocator[TrieEdge]] old
    cdef size_t j
    if found >= 0:
        return found
    if (b.used + 1) * 8 > b.edges.size() * 5:
        old.swap(b.edges)
        _edges_init(b, 65 - b.shift)
        for j in range(old.size()):
            if old[j].key != NO_EDGE:
                _put_edge(b, old[j].key, old[j].child)
    _put_edge(b, key, child)
    return child


cdef inline void backtrack_build(Backtrack& b, const uint8_t* vocab, const int64_t* starts, const int64_t* ends,
                                 int32_t n_tokens, const int32_t* byte_ids, const vector[int32_t]& pairs) noexcept nogil:
    """Build the tables from each byte's token and the final pairs (left, right, rank, result, four
    int32 each: one per token that merging reaches); `usable` says whether backtracking is exact."""
    cdef int32_t t, node, fresh = n_tokens, best
    cdef int64_t i, n, edges_max = 0
    cdef int bits = 4
    cdef size_t k
    cdef vector[uint8_t] reachable
    cdef vector[pair[int32_t, int32_t]] order
    b.usable = False
    b.n_tokens = n_tokens
    b.length.resize(n_tokens)
    b.formed.assign(n_tokens, NO_RANK)
    b.left.assign(n_tokens, -1)
    b.right.assign(n_tokens, -1)
    b.shorter.assign(n_tokens, -1)
    reachable.assign(n_tokens, 0)
    for t in range(n_tokens):
        b.length[t] = <int32_t>(ends[t] - starts[t])
    for i in range(256):
        t = byte_ids[i]
        if t >= 0 and (b.length[t] != 1 or vocab[starts[t]] != i):
            return  # a byte whose token is not that byte
        if t >= 0:
            reachable[t] = 1
            b.formed[t] = -1
            b.left[t] = t
            b.right[t] = t
    k = 0
    while k < pairs.size():
        t = pairs[k + 3]
        reachable[t] = 1
        b.left[t] = pairs[k]
        b.right[t] = pairs[k + 1]
        b.formed[t] = pairs[k + 2]
        k += 4
    for t in range(n_tokens):
        if reachable[t]:
            edges_max += b.length[t]
            if b.length[t] > 1 and not (b.formed[b.left[t]] < b.formed[t] and b.formed[b.right[t]] < b.formed[t]):
                return  # a merge that forms its token before one of its parts: not exact
    if n_tokens + edges_max >= NODE_LIMIT - 1:
        return
    while (<int64_t>1 << bits) * 5 < n_tokens * 8:  # a start: prefixes shared, a trie has fewer nodes than bytes
        bits += 1
    _edges_init(b, bits)
    for i in range(256):
        b.root[i] = -1
    for t in range(n_tokens):
        if reachable[t] and b.length[t] == 1:
            b.root[vocab[starts[t]]] = t
        elif reachable[t]:
            order.push_back(pair[int32_t, int32_t](b.length[t], t))
    sort(order.begin(), order.end())  # shorter first: the node a token ends at is new, and is the token
    for k in range(order.size()):
        t = order[k].second
        n = b.length[t]
        node = b.root[vocab[starts[t]]]
        best = -1
        for i in range(1, n):
            if node < n_tokens:
                best = node
            node = _add_child(b, node, vocab[starts[t] + i], t if i == n - 1 else fresh)
            if node == fresh:
                fresh += 1
        b.shorter[t] = best
    _mark_leaves(b, fresh)
    b.usable = True


cdef inline void _mark_leaves(Backtrack& b, int32_t n_nodes) noexcept nogil:
    """Flag the children that have no children, and fill the table of each pair of bytes' node."""
    cdef vector[uint8_t] parent
    cdef size_t j
    cdef int a, c
    cdef int32_t node
    parent.assign(n_nodes, 0)
    for j in range(b.edges.size()):
        if b.edges[j].key != NO_EDGE:
            parent[b.edges[j].key >> 8] = 1
    for j in range(b.edges.size()):
        if b.edges[j].key != NO_EDGE and not parent[b.edges[j].child]:
            b.edges[j].child |= LEAF
    b.root2.assign(65536, -1)
    for a in range(256):
        if b.root[a] >= 0 and parent[b.root[a]]:
            for c in range(256):
                node = _child(b, b.root[a], <uint8_t>c)
                b.root2[(a << 8) | c] = node


cdef inline int32_t longest_prefix(const Backtrack& b, const uint8_t* p, int64_t n) noexcept nogil:
    """The longest reachable token that p[:n] (n >= 1) starts with; -1 when its first byte has none."""
    cdef int32_t node = b.root[p[0]], best = node
    cdef int64_t i = 2
    if n == 1 or node < 0:
        return best
    node = b.root2[(<int>p[0] << 8) | p[1]]
    while node >= 0:
        if (node & ~LEAF) < b.n_tokens:
            best = node & ~LEAF
        if node & LEAF or i == n:
            break
        node = _child(b, node, p[i])
        i += 1
    return best


cdef inline bint valid_pair(const Backtrack& b, const MergeTable* merges, int32_t x, int32_t y) noexcept nogil:
    """Whether the bytes of tokens x and y alone merge into x, y. Going back in time from (x, y): the
    pair at the boundary must not merge before the next merge on either side (the left side's merges
    happen first on a tie of ranks: leftmost first), down to two single bytes."""
    cdef int32_t limit = NO_RANK, result = 0
    while True:
        if merge_table_rank(merges, x, y, &result, NO_RANK) < limit:
            return False
        if b.formed[x] > b.formed[y]:
            limit = b.formed[x]
            x = b.right[x]
        elif b.formed[y] >= 0:
            limit = b.formed[y] + 1
            y = b.left[y]
        else:
            return True


cdef inline bint _valid_memo(const Backtrack& b, const MergeTable* merges, uint64_t* memo, int32_t x,
                             int32_t y) noexcept nogil:
    """`valid_pair`, remembered in a direct-mapped memo (token ids are below 2^24)."""
    cdef uint64_t key = (<uint64_t>x << 32) | (<uint64_t>y << 1)
    cdef uint64_t* e = &memo[((key * <uint64_t>0x9E3779B97F4A7C15ULL) >> 51) & (PAIR_MEMO - 1)]
    if (e[0] | 1) == (key | 1):
        return e[0] & 1
    cdef bint ok = valid_pair(b, merges, x, y)
    e[0] = key | ok
    return ok


cdef inline int backtrack_encode(const Backtrack& b, const MergeTable* merges, const uint8_t* p, int64_t n,
                                 IdVector& out, BacktrackScratch& s) noexcept nogil:
    """Append the BPE ids of p[:n] (n >= 1) to `out`, with a thread's scratch `s`. 1 when a byte has no token, or (only if the vocabulary were not one where
    backtracking is exact) when no encoding is found; nothing is appended then."""
    cdef size_t base = out.size()
    cdef int64_t pos = 0, end
    cdef int32_t t = longest_prefix(b, p, n), last = -1
    if t < 0:
        return 1
    s.dead.assign(<size_t>(n >> 6) + 1, 0)
    if s.memo.size() == 0:
        s.memo.assign(PAIR_MEMO, ~<uint64_t>0)
    while True:
        end = pos + b.length[t]
        if not (s.dead[end >> 6] >> (end & 63)) & 1 and (last < 0 or _valid_memo(b, merges, s.memo.data(), last, t)):
            out.push_back(t)
            if end == n:
                return 0
            pos = end
            last = t
            t = longest_prefix(b, p + pos, n - pos)
            if t < 0:
                out.resize(base)
                return 1
            continue
        t = b.shorter[t]
        if t >= 0:
            continue
        if last < 0:
            return 1
        s.dead[pos >> 6] |= <uint64_t>1 << (pos & 63)  # nothing fits here: take back the token before
        t = last
        out.pop_back()
        pos -= b.length[t]
        last = out[out.size() - 1] if out.size() > base else -1
