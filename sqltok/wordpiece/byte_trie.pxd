# cython: language_level=3
"""A byte trie over a fixed set of keys with several roots, for greedy longest-prefix matching: one
walk over the text finds the longest key that starts there (no probe per candidate length).

A root's children are a direct table of 256. Every other node is one record in a single int32 array,
laid out depth first so that a walk mostly reads forward through a few cache lines: its key's id (or
-1), its number of children, their labels (sorted, 4 to an int32, searched 8 at a time) and their
records' offsets. Built once (`byte_trie_build`), then only read, from any number of threads.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from sqltok.native.portable cimport ctz64


cdef struct ByteTrie:
    vector[int32_t] records     # [id, count, labels..., child offsets...] per node, then padding
    vector[int32_t] roots       # 256 per root: the offset of the node after each first byte, or -1


cdef inline void byte_trie_build(ByteTrie* t, list roots):
    """`roots`: for each root, a list of (key bytes, id); the first id of a repeated key wins."""
    cdef list children = [{} for _ in roots]
    cdef list tokens = [-1] * len(roots)
    cdef list order = []
    cdef list offset
    cdef list stack
    cdef int64_t node, r, at = 0
    for r, keys in enumerate(roots):
        for key, tid in keys:
            node = r
            for b in key:
                nxt = children[node].get(b)
                if nxt is None:
                    nxt = len(children)
                    children[node][b] = nxt
                    children.append({})
                    tokens.append(-1)
                node = nxt
            if tokens[node] < 0:
                tokens[node] = tid
    offset = [-1] * len(children)
    stack = [children[r][b] for r in range(len(roots)) for b in sorted(children[r], reverse=True)]
    while stack:                # depth first, children in label order
        node = stack.pop()
        order.append(node)
        offset[node] = at
        at += 2 + (len(children[node]) + 3) // 4 + len(children[node])
        stack.extend([children[node][b] for b in sorted(children[node], reverse=True)])
    t.records.assign(at + 2, 0)
    for node in order:
        at = offset[node]
        labels = bytes(sorted(children[node])) + bytes((4 - len(children[node]) % 4) % 4)
        t.records[at] = tokens[node]
        t.records[at + 1] = len(children[node])
        memcpy(&t.records[at + 2], <const char*>labels, len(labels))
        at += 2 + len(labels) // 4
        for b in sorted(children[node]):
            t.records[at] = offset[children[node][b]]
            at += 1
    t.roots.assign(256 * len(roots), -1)
    for r in range(len(roots)):
        for b, nxt in children[r].items():
            t.roots[256 * r + b] = offset[nxt]


cdef inline int32_t byte_trie_child(const int32_t* rec, uint8_t b) noexcept nogil:
    """The offset of the child along byte b of the node at `rec`, or -1."""
    cdef uint64_t ones = 0x0101010101010101ULL, w, z, hit
    cdef int32_t j = 0, k, count = rec[1]
    cdef const uint8_t* labels = <const uint8_t*>(rec + 2)
    while j < count:
        memcpy(&w, labels + j, 8)
        z = w ^ (ones * b)
        hit = (z - ones) & ~z & (ones * 0x80)      # the lowest set byte is the first equal label
        if hit:
            k = j + (ctz64(hit) >> 3)
            return rec[2 + ((count + 3) >> 2) + k] if k < count else -1
        j += 8
    return -1


cdef inline int32_t byte_trie_longest(const ByteTrie* t, int root, const uint8_t* p, int64_t n,
                                      int64_t* length) noexcept nogil:
    """The id of the longest key under `root` that p[:n] starts with (its length in `length`), or -1."""
    cdef int32_t node = t.roots[256 * root + p[0]], found = -1
    cdef const int32_t* rec
    cdef int64_t k = 1
    while node >= 0:
        rec = t.records.data() + node
        if rec[0] >= 0:
            found = rec[0]
            length[0] = k
        if k == n:
            break
        node = byte_trie_child(rec, p[k])
        k += 1
    return found
