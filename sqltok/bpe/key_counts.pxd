# cython: language_level=3
"""Counts of distinct keys that are runs of int32 token ids (supermerge candidates), for one thread:
an open-addressing table whose keys live back to back in one arena, in the order they were first
seen. A batch's candidates are counted here so that DuckDB groups each batch's distinct candidates,
not every occurrence, and no list it unnests grows with a document."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.vector cimport vector

from sqltok.native.bytes_table cimport bytes_hash


cdef struct KeySlot:
    uint64_t hash               # 0: an empty slot
    int64_t start               # the key is arena[start:start + length]
    int64_t length
    int64_t count


cdef struct KeyCounts:
    vector[KeySlot] slots
    vector[int32_t] arena
    vector[uint64_t] used       # the slots in use, in the order their keys were first seen
    uint64_t mask


cdef inline void _empty_slots(KeyCounts& t, size_t slots) noexcept nogil:
    """Make the table `slots` empty slots (a power of two)."""
    cdef KeySlot empty
    empty.hash = 0
    empty.start = 0
    empty.length = 0
    empty.count = 0
    t.slots.assign(slots, empty)
    t.mask = slots - 1


cdef inline void key_counts_init(KeyCounts& t, size_t slots) noexcept nogil:
    """An empty table of `slots` slots (a power of two)."""
    _empty_slots(t, slots)
    t.arena.clear()
    t.used.clear()


cdef inline uint64_t _key_hash(const int32_t* ids, int64_t n) noexcept nogil:
    return bytes_hash(<const unsigned char*>ids, n * <int64_t>sizeof(int32_t))


cdef inline void _key_counts_grow(KeyCounts& t) noexcept nogil:
    cdef vector[KeySlot] old
    old.swap(t.slots)
    _empty_slots(t, 2 * old.size())
    cdef size_t k
    cdef uint64_t j
    for k in range(t.used.size()):
        j = old[t.used[k]].hash & t.mask
        while t.slots[j].hash != 0:
            j = (j + 1) & t.mask
        t.slots[j] = old[t.used[k]]
        t.used[k] = j


cdef inline void key_counts_add(KeyCounts& t, const int32_t* ids, int64_t n) noexcept nogil:
    """Count key ids[:n] once more."""
    if 4 * (t.used.size() + 1) > 3 * t.slots.size():
        _key_counts_grow(t)
    cdef uint64_t h = _key_hash(ids, n)
    cdef uint64_t j = h & t.mask
    cdef KeySlot* s
    while True:
        s = &t.slots[j]
        if s.hash == 0:
            s.hash = h
            s.start = <int64_t>t.arena.size()
            s.length = n
            s.count = 1
            t.arena.insert(t.arena.end(), ids, ids + n)
            t.used.push_back(j)
            return
        if s.hash == h and s.length == n and memcmp(t.arena.data() + s.start, ids, n * sizeof(int32_t)) == 0:
            s.count += 1
            return
        j = (j + 1) & t.mask
