# cython: language_level=3
"""An open-addressing hash map from byte strings to int32 ids, for a fixed set of keys.

Key `id` is data[starts[id]:ends[id]] (the vocabulary's bytes). A 16-byte slot holds the key's first
8 bytes, its length and id: keys of up to 8 bytes (most pretokens) are checked within the slot, longer
ones against the vocabulary. Four slots share a cache line and the table stays small (o200k: 4 MiB).
Built once (`bytes_table_build`), then only read, from any number of threads.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

cdef struct BytesSlot:
    uint64_t head               # the key's first 8 bytes, zero-padded
    int32_t id                  # -1 marks an empty slot
    uint32_t length


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


cdef inline uint64_t key_head(const uint8_t* p, int64_t n) noexcept nogil:
    """The first 8 bytes of p[:n], zero-padded."""
    cdef uint64_t w = 0
    memcpy(&w, p, 8 if n > 8 else n)
    return w


cdef inline bint _slot_matches(const BytesSlot* s, const uint8_t* data, const int64_t* starts,
                               const uint8_t* p, int64_t n, uint64_t head) noexcept nogil:
    if s.length != n or s.head != head:
        return False
    return n <= 8 or memcmp(data + starts[s.id] + 8, p + 8, n - 8) == 0


cdef inline void bytes_table_build(BytesTable* t, const uint8_t* data, const int64_t* starts,
                                   const int64_t* ends, const vector[int32_t]& keys) noexcept nogil:
    """Index ids `keys`; the first id of a duplicated byte string wins."""
    cdef uint64_t cap = 16
    cdef size_t k
    cdef int32_t tid
    cdef int64_t n
    cdef uint64_t j, head
    cdef BytesSlot empty
    empty.head = 0
    empty.id = -1
    empty.length = 0
    while cap * 3 < keys.size() * 4 + 4:      # load factor at most 3/4
        cap <<= 1
    t.slots.assign(cap, empty)
    t.mask = cap - 1
    for k in range(keys.size()):
        tid = keys[k]
        n = ends[tid] - starts[tid]
        head = key_head(data + starts[tid], n)
        j = bytes_hash(data + starts[tid], n) & t.mask
        while t.slots[j].id >= 0:
            if _slot_matches(&t.slots[j], data, starts, data + starts[tid], n, head):
                break
            j = (j + 1) & t.mask
        if t.slots[j].id < 0:
            t.slots[j].head = head
            t.slots[j].id = tid
            t.slots[j].length = <uint32_t>n


cdef inline int32_t bytes_table_get(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                    const int64_t* ends, const uint8_t* p, int64_t n) noexcept nogil:
    """The id whose bytes equal p[:n], or -1."""
    return bytes_table_get_hashed(t, data, starts, ends, p, n, bytes_hash(p, n))


cdef inline int32_t bytes_table_get_hashed(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                           const int64_t* ends, const uint8_t* p, int64_t n,
                                           uint64_t h) noexcept nogil:
    """`bytes_table_get` with the key's `bytes_hash` already known."""
    return bytes_table_get_head(t, data, starts, p, n, h, key_head(p, n))


cdef inline int32_t bytes_table_get_head(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                         const uint8_t* p, int64_t n, uint64_t h, uint64_t head) noexcept nogil:
    """`bytes_table_get_hashed` with the key's `key_head` already known too (callers that hold it in
    a register avoid a short copy whose read-back stalls)."""
    if t.slots.size() == 0:
        return -1
    cdef uint64_t j = h & t.mask
    cdef const BytesSlot* s
    while True:
        s = &t.slots[j]
        if s.id < 0:
            return -1
        if _slot_matches(s, data, starts, p, n, head):
            return s.id
        j = (j + 1) & t.mask
