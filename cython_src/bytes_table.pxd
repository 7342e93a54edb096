# cython: language_level=3
"""An open-addressing hash map from byte strings to int32 ids, for a fixed set of keys.

Key `id` is data[starts[id]:ends[id]] (the vocabulary's bytes); a slot holds the key's hash and id.
Built once (`bytes_table_build`), then only read, from any number of threads. Header-only.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcmp
from libcpp.vector cimport vector


cdef struct BytesTable:
    vector[uint64_t] hashes     # 0 marks an empty slot
    vector[int32_t] ids
    uint64_t mask


cdef inline uint64_t bytes_hash(const uint8_t* p, int64_t n) noexcept nogil:
    """FNV-1a over the bytes, never 0."""
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef int64_t i
    for i in range(n):
        h = (h ^ p[i]) * <uint64_t>0x100000001B3ULL
    return h | 1


cdef inline bint _same(const uint8_t* data, const int64_t* starts, const int64_t* ends, int32_t tid,
                       const uint8_t* p, int64_t n) noexcept nogil:
    return ends[tid] - starts[tid] == n and memcmp(data + starts[tid], p, n) == 0


cdef inline void bytes_table_build(BytesTable* t, const uint8_t* data, const int64_t* starts,
                                   const int64_t* ends, const vector[int32_t]& keys) noexcept nogil:
    """Index ids `keys`; the first id of a duplicated byte string wins."""
    cdef uint64_t cap = 16
    cdef size_t k
    cdef int32_t tid
    cdef uint64_t h, j
    while cap < 2 * keys.size() + 2:
        cap <<= 1
    t.hashes.assign(cap, 0)
    t.ids.assign(cap, -1)
    t.mask = cap - 1
    for k in range(keys.size()):
        tid = keys[k]
        h = bytes_hash(data + starts[tid], ends[tid] - starts[tid])
        j = h & t.mask
        while t.hashes[j] != 0:
            if t.hashes[j] == h and _same(data, starts, ends, t.ids[j], data + starts[tid],
                                          ends[tid] - starts[tid]):
                break
            j = (j + 1) & t.mask
        if t.hashes[j] == 0:
            t.hashes[j] = h
            t.ids[j] = tid


cdef inline int32_t bytes_table_get(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                    const int64_t* ends, const uint8_t* p, int64_t n) noexcept nogil:
    """The id whose bytes equal p[:n], or -1."""
    if t.hashes.size() == 0:
        return -1
    cdef uint64_t h = bytes_hash(p, n)
    cdef uint64_t j = h & t.mask
    while t.hashes[j] != 0:
        if t.hashes[j] == h and _same(data, starts, ends, t.ids[j], p, n):
            return t.ids[j]
        j = (j + 1) & t.mask
    return -1
