# cython: language_level=3
"""An open-addressing hash map from byte strings to int32 ids, for a fixed set of keys.

Key `id` is data[starts[id]:ends[id]] (the vocabulary's bytes). A 32-byte slot holds the key's hash,
its id and, for keys of up to 19 bytes (nearly all tokens), the key itself: a lookup then touches one
cache line. Built once (`bytes_table_build`), then only read, from any number of threads.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

cdef enum:
    INLINE_KEY = 19


cdef struct BytesSlot:
    uint64_t hash               # 0 marks an empty slot
    int32_t id
    uint8_t length              # key length when <= INLINE_KEY, else 255
    uint8_t key[INLINE_KEY]


cdef struct BytesTable:
    vector[BytesSlot] slots
    uint64_t mask


cdef inline uint64_t _mix64(uint64_t h) noexcept nogil:
    h ^= h >> 32
    h *= <uint64_t>0xD6E8FEB86659FD93ULL
    h ^= h >> 32
    return h


cdef inline uint64_t bytes_hash(const uint8_t* p, int64_t n) noexcept nogil:
    """A hash of p[:n] that reads 8 bytes at a time; never 0."""
    cdef uint64_t h = <uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t w
    cdef int64_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = _mix64(h ^ w)
        i += 8
    if i < n:
        w = 0
        memcpy(&w, p + i, n - i)
        h = _mix64(h ^ w)
    return h if h != 0 else 1


cdef inline bint _slot_matches(const BytesSlot* s, const uint8_t* data, const int64_t* starts,
                               const int64_t* ends, const uint8_t* p, int64_t n) noexcept nogil:
    if s.length != 255:
        return s.length == n and memcmp(s.key, p, n) == 0
    return ends[s.id] - starts[s.id] == n and memcmp(data + starts[s.id], p, n) == 0


cdef inline void bytes_table_build(BytesTable* t, const uint8_t* data, const int64_t* starts,
                                   const int64_t* ends, const vector[int32_t]& keys) noexcept nogil:
    """Index ids `keys`; the first id of a duplicated byte string wins."""
    cdef uint64_t cap = 16
    cdef size_t k
    cdef int32_t tid
    cdef int64_t n
    cdef uint64_t h, j
    cdef BytesSlot empty
    empty.hash = 0
    while cap < 2 * keys.size() + 2:
        cap <<= 1
    t.slots.assign(cap, empty)
    t.mask = cap - 1
    for k in range(keys.size()):
        tid = keys[k]
        n = ends[tid] - starts[tid]
        h = bytes_hash(data + starts[tid], n)
        j = h & t.mask
        while t.slots[j].hash != 0:
            if t.slots[j].hash == h and _slot_matches(&t.slots[j], data, starts, ends, data + starts[tid], n):
                break
            j = (j + 1) & t.mask
        if t.slots[j].hash == 0:
            t.slots[j].hash = h
            t.slots[j].id = tid
            if n <= INLINE_KEY:
                t.slots[j].length = <uint8_t>n
                memcpy(t.slots[j].key, data + starts[tid], n)
            else:
                t.slots[j].length = 255


cdef inline int32_t bytes_table_get(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                    const int64_t* ends, const uint8_t* p, int64_t n) noexcept nogil:
    """The id whose bytes equal p[:n], or -1."""
    return bytes_table_get_hashed(t, data, starts, ends, p, n, bytes_hash(p, n))


cdef inline int32_t bytes_table_get_hashed(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                           const int64_t* ends, const uint8_t* p, int64_t n,
                                           uint64_t h) noexcept nogil:
    """`bytes_table_get` with the key's `bytes_hash` already known."""
    if t.slots.size() == 0:
        return -1
    cdef uint64_t j = h & t.mask
    cdef const BytesSlot* s
    while True:
        s = &t.slots[j]
        if s.hash == 0:
            return -1
        if s.hash == h and _slot_matches(s, data, starts, ends, p, n):
            return s.id
        j = (j + 1) & t.mask
