# cython: language_level=3
"""An open-addressing hash map from a token pair (two int32 ids packed in a uint64) to a dense pair index.

Pairs are never removed (a dead pair keeps its index with a zero count), so the table only grows:
linear probing, power-of-two capacity, resized at half load; key and value share a slot, so a lookup
is one cache miss. A slot holds the key's complement, so that an empty slot is all zero bytes (no
pair packs to all ones: ids are not negative) and a fresh table from calloc (fresh pages, for a big
one) needs no pass to clear it. Header-only: everything is inline.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from libc.stdlib cimport calloc, free


cdef struct PairSlot:
    uint64_t stored  # ~key; 0: empty
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
    while cap < <uint64_t>(2 * capacity_hint):
        cap <<= 1
    t.slots = <PairSlot*>calloc(cap, sizeof(PairSlot))
    if t.slots == NULL:
        with gil:
            raise MemoryError()
    t.mask = cap - 1
    t.size = 0
    return 0


cdef inline void pair_table_free(PairTable* t) noexcept nogil:
    if t.slots != NULL:
        free(t.slots)
    t.slots = NULL


cdef inline int _pair_table_grow(PairTable* t) except -1 nogil:
    """Twice the slots (the table is left as it was when they cannot be had)."""
    cdef PairTable bigger
    cdef uint64_t i, j
    pair_table_init(&bigger, <int64_t>(t.mask + 1))
    for i in range(t.mask + 1):
        if t.slots[i].stored != 0:
            j = _mix(~t.slots[i].stored) & bigger.mask
            while bigger.slots[j].stored != 0:
                j = (j + 1) & bigger.mask
            bigger.slots[j] = t.slots[i]
    bigger.size = t.size
    pair_table_free(t)
    t[0] = bigger
    return 0


cdef inline int32_t pair_table_get(const PairTable* t, uint64_t key) noexcept nogil:
    """The index stored for `key`, or -1."""
    cdef uint64_t j = _mix(key) & t.mask, stored = ~key
    while True:
        if t.slots[j].stored == stored:
            return t.slots[j].value
        if t.slots[j].stored == 0:
            return -1
        j = (j + 1) & t.mask


cdef inline int32_t pair_table_get_or_insert(PairTable* t, uint64_t key, int32_t new_value) except -2 nogil:
    """The index stored for `key`; when absent, store `new_value` and return -1."""
    cdef uint64_t j, stored = ~key
    if 2 * (t.size + 1) > <int64_t>(t.mask + 1):
        _pair_table_grow(t)
    j = _mix(key) & t.mask
    while True:
        if t.slots[j].stored == stored:
            return t.slots[j].value
        if t.slots[j].stored == 0:
            t.slots[j].stored = stored
            t.slots[j].value = new_value
            t.size += 1
            return -1
        j = (j + 1) & t.mask
