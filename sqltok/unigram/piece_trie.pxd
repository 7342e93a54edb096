# cython: language_level=3
"""A byte trie of the vocabulary's pieces for finding every piece that starts at a place of a text
(SentencePiece's common prefix search): node n's value is the id of the piece its bytes spell (-1:
none); the edges (node, byte) -> child sit in one open-addressing table that doubles when half full."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.vector cimport vector


cdef struct PieceTrie:
    vector[uint64_t] keys     # (node << 8 | byte) + 1 of each slot's edge; 0: an empty slot
    vector[int32_t] children  # the edge's child node
    vector[int32_t] values    # per node: the piece id, or -1
    int64_t used


cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= <uint64_t>0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    return h


cdef inline int32_t trie_child(const PieceTrie& t, int32_t node, uint8_t b) noexcept nogil:
    """The child of `node` by byte `b`, or -1."""
    cdef uint64_t key = ((<uint64_t>node << 8) | b) + 1
    cdef uint64_t mask = t.keys.size() - 1
    cdef uint64_t i = _mix(key) & mask
    while t.keys[i] != 0:
        if t.keys[i] == key:
            return t.children[i]
        i = (i + 1) & mask
    return -1


cdef inline void _put(vector[uint64_t]& keys, vector[int32_t]& children, uint64_t key, int32_t child) noexcept nogil:
    cdef uint64_t mask = keys.size() - 1
    cdef uint64_t i = _mix(key) & mask
    while keys[i] != 0:
        i = (i + 1) & mask
    keys[i] = key
    children[i] = child


cdef inline void _grow(PieceTrie& t) noexcept nogil:
    cdef vector[uint64_t] keys
    cdef vector[int32_t] children
    cdef size_t i
    keys.assign(t.keys.size() * 2, 0)
    children.assign(t.keys.size() * 2, -1)
    for i in range(t.keys.size()):
        if t.keys[i] != 0:
            _put(keys, children, t.keys[i], t.children[i])
    t.keys.swap(keys)
    t.children.swap(children)


cdef inline void trie_init(PieceTrie& t) noexcept nogil:
    t.keys.assign(1024, 0)
    t.children.assign(1024, -1)
    t.values.assign(1, -1)
    t.used = 0


cdef inline void trie_insert(PieceTrie& t, const uint8_t* s, int64_t n, int32_t id) noexcept nogil:
    """Add piece s[:n] with `id`."""
    cdef int32_t node = 0, child
    cdef int64_t k
    for k in range(n):
        child = trie_child(t, node, s[k])
        if child < 0:
            if 2 * (t.used + 1) > <int64_t>t.keys.size():
                _grow(t)
            child = <int32_t>t.values.size()
            t.values.push_back(-1)
            _put(t.keys, t.children, ((<uint64_t>node << 8) | s[k]) + 1, child)
            t.used += 1
        node = child
    t.values[node] = id
