# cython: language_level=3
"""An open-addressing hash map from a token pair (two int32 ids packed in a uint64) to a dense pair index.

Pairs are never removed (a dead pair keeps its index with a zero count), so the table only grows:
linear probing, power-of-two capacity, resized at half load; key and value share a slot, so a lookup
is one cache miss. Header-only: everything is inline.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

cdef extern from *:
    """
    #define SQLTOK_EMPTY_PAIR 0xFFFFFFFFFFFFFFFFULL
    """
    const uint64_t EMPTY_KEY "SQLTOK_EMPTY_PAIR"


cdef struct PairSlot:
    uint64_t key
    int32_t value


cdef struct PairTable:
    PairSlot* slots
    uint64_t mask
    int64_t size


cdef inline uint64_t pack_pair(int32_t left, int32_t right) noexcept nogil:
    return (<uint64_t>left << 32) | <uint64_t><uint32_t>right



cdef inline uint64_t _mix(uint64_t k) noexcept nogil:
    # splitmix64 finalizer: spreads consecutive ids over the table.
    k ^= k >> 30
    k *= <uint64_t>0xBF58476D1CE4E5B9ULL
    k ^= k >> 27
    k *= <uint64_t>0x94D049BB133111EBULL
    k ^= k >> 31
    return k


cdef inline int pair_table_init(PairTable* t, int64_t capacity_hint) except -1 nogil:
    cdef uint64_t cap = 1024
    cdef uint64_t i
    while cap < <uint64_t>(2 * capacity_hint):
        cap <<= 1
    t.slots = <PairSlot*>malloc(cap * sizeof(PairSlot))
    if t.slots == NULL:
        with gil:
            raise MemoryError()
    for i in range(cap):
        t.slots[i].key = EMPTY_KEY
    t.mask = cap - 1
    t.size = 0
    return 0


cdef inline void pair_table_free(PairTable* t) noexcept nogil:
    free(t.slots)
    t.slots = NULL


cdef inline int _pair_table_grow(PairTable* t) except -1 nogil:
    cdef PairSlot* old = t.slots
    cdef uint64_t old_cap = t.mask + 1
    cdef uint64_t i, j
    pair_table_init(t, <int64_t>old_cap)
    for i in range(old_cap):
        if old[i].key != EMPTY_KEY:
            j = _mix(old[i].key) & t.mask
            while t.slots[j].key != EMPTY_KEY:
                j = (j + 1) & t.mask
            t.slots[j] = old[i]
            t.size += 1
    free(old)
    return 0


cdef inline int32_t pair_table_get(const PairTable* t, uint64_t key) noexcept nogil:
    """The index stored for `key`, or -1."""
    cdef uint64_t j = _mix(key) & t.mask
    while True:
        if t.slots[j].key == key:
            return t.slots[j].value
        if t.slots[j].key == EMPTY_KEY:
            return -1
        j = (j + 1) & t.mask


cdef inline int32_t pair_table_get_or_insert(PairTable* t, uint64_t key, int32_t new_value) except -2 nogil:
    """The index stored for `key`; when absent, store `new_value` and return -1."""
    cdef uint64_t j
    if 2 * (t.size + 1) > <int64_t>(t.mask + 1):
        _pair_table_grow(t)
    j = _mix(key) & t.mask
    while True:
        if t.slots[j].key == key:
            return t.slots[j].value
        if t.slots[j].key == EMPTY_KEY:
            t.slots[j].key = key
            t.slots[j].value = new_value
            t.size += 1
            return -1
        j = (j + 1) & t.mask
