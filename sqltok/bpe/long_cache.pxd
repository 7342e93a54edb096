# cython: language_level=3
"""A thread's cache of pretokens too long for the encoder's word-keyed cache (over 24 bytes: runs of
Chinese, Japanese or Thai letters, long identifiers), with the ids merging gave them. Open addressing
over a hash, keys and ids in two arenas. It starts at LONG_SLOTS_MIN slots and doubles when three
quarters full (fresh memory costs a page fault per 4 KiB, which a short call would not win back);
full at LONG_SLOTS, or once its arena holds LONG_BYTES_MAX bytes, it starts over empty (a cache,
never a growing index of the corpus)."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcmp
from libcpp.vector cimport vector

from sqltok.native.id_lists cimport IdVector


cdef enum:
    LONG_SLOTS_MIN = 1 << 6
    LONG_SLOTS = 1 << 16
    LONG_BYTES_MAX = 1 << 24


cdef struct LongSlot:
    uint64_t hash             # bytes_hash of the key (never 0); 0: empty
    int64_t key_at            # the key is LongCache.keys[key_at:key_at + length]
    int64_t ids_at            # its ids are LongCache.ids[ids_at:ids_at + n_ids]
    int32_t length
    int32_t n_ids


cdef cppclass LongCache:
    vector[LongSlot] slots
    vector[uint8_t] keys
    vector[int32_t] ids
    size_t used


cdef inline LongSlot* _long_find(const LongCache& c, const uint8_t* p, int64_t n, uint64_t h) noexcept nogil:
    """The slot holding p[:n] (hash h), or the empty slot where it would go (c has slots)."""
    cdef uint64_t mask = c.slots.size() - 1, j = h & mask
    cdef LongSlot* s
    while True:
        s = <LongSlot*>&c.slots[j]
        if s.hash == 0 or (s.hash == h and s.length == n and memcmp(c.keys.data() + s.key_at, p, n) == 0):
            return s
        j = (j + 1) & mask


cdef inline void _long_resize(LongCache& c, size_t slots) noexcept nogil:
    """Move what `c` holds to a table of `slots` slots."""
    cdef vector[LongSlot] old
    cdef LongSlot empty
    cdef size_t j
    empty.hash = 0
    old.swap(c.slots)
    c.slots.assign(slots, empty)
    c.used = 0
    for j in range(old.size()):
        if old[j].hash != 0:
            _long_find(c, c.keys.data() + old[j].key_at, old[j].length, old[j].hash)[0] = old[j]
            c.used += 1


cdef inline bint long_cache_get(const LongCache& c, const uint8_t* p, int64_t n, uint64_t h,
                                IdVector& out) noexcept nogil:
    """Append the cached ids of p[:n] (hash h) to `out`; False when it is not cached."""
    if c.slots.size() == 0:
        return False
    cdef const LongSlot* s = _long_find(c, p, n, h)
    if s.hash == 0:
        return False
    out.insert(out.end(), c.ids.data() + s.ids_at, c.ids.data() + s.ids_at + s.n_ids)
    return True


cdef inline void long_cache_put(LongCache& c, const uint8_t* p, int64_t n, uint64_t h, const int32_t* ids,
                                int64_t count) noexcept nogil:
    """Cache ids[:count] for p[:n] (hash h), unless it is there already."""
    cdef LongSlot* s
    cdef LongSlot empty
    cdef bint full
    if c.slots.size() == 0:
        _long_resize(c, LONG_SLOTS_MIN)
    full = (c.used + 1) * 4 > c.slots.size() * 3
    if c.keys.size() + n > LONG_BYTES_MAX or (full and c.slots.size() >= LONG_SLOTS):  # start over
        empty.hash = 0
        c.slots.assign(c.slots.size(), empty)
        c.keys.clear()
        c.ids.clear()
        c.used = 0
    elif full:
        _long_resize(c, c.slots.size() * 2)
    s = _long_find(c, p, n, h)
    if s.hash != 0:
        return
    s.hash = h
    s.key_at = <int64_t>c.keys.size()
    s.ids_at = <int64_t>c.ids.size()
    s.length = <int32_t>n
    s.n_ids = <int32_t>count
    c.keys.insert(c.keys.end(), p, p + n)
    c.ids.insert(c.ids.end(), ids, ids + count)
    c.used += 1
