# cython: language_level=3
"""The encoder's merge table: (left id, right id) -> (rank, result id) in one 16-byte slot, so that a
lookup touches one cache line. Open addressing, built once, then read by any number of threads."""
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from sqltok.native.huge_pages cimport SqltokHugeAllocator

cdef extern from *:
    """
    #define SQLTOK_NO_PAIR 0xFFFFFFFFFFFFFFFFULL
    """
    const uint64_t NO_PAIR "SQLTOK_NO_PAIR"


cdef struct MergeSlot:
    uint64_t key
    int32_t rank
    int32_t result


cdef struct MergeTable:
    vector[MergeSlot, SqltokHugeAllocator[MergeSlot]] slots  # read at random: on huge pages
    uint64_t mask


cdef inline uint64_t merge_key(int32_t left, int32_t right) noexcept nogil:
    return (<uint64_t><uint32_t>left << 32) | <uint64_t><uint32_t>right


cdef inline uint64_t _spread(uint64_t k) noexcept nogil:
    k ^= k >> 31
    k *= <uint64_t>0x7FB5D329728EA185ULL
    k ^= k >> 27
    return k


cdef inline void merge_table_init(MergeTable* t, size_t n) noexcept nogil:
    cdef uint64_t cap = 16
    cdef MergeSlot empty
    empty.key = NO_PAIR
    empty.rank = 0
    empty.result = 0
    while cap * 5 < n * 8 + 16:   # load factor at most 5/8
        cap <<= 1
    t.slots.assign(cap, empty)
    t.mask = cap - 1


cdef inline bint merge_table_add(MergeTable* t, int32_t left, int32_t right, int32_t rank,
                                 int32_t result) noexcept nogil:
    """Store a pair unless present (the first rank given for a pair wins); True when stored."""
    cdef uint64_t key = merge_key(left, right)
    cdef uint64_t j = _spread(key) & t.mask
    while t.slots[j].key != NO_PAIR:
        if t.slots[j].key == key:
            return False
        j = (j + 1) & t.mask
    t.slots[j].key = key
    t.slots[j].rank = rank
    t.slots[j].result = result
    return True


cdef inline uint64_t merge_table_start(const MergeTable* t, int32_t left, int32_t right) noexcept nogil:
    """The index of the slot where the lookup of (left, right) starts."""
    return _spread(merge_key(left, right)) & t.mask


cdef inline int32_t merge_table_rank(const MergeTable* t, int32_t left, int32_t right, int32_t* result,
                                     int32_t no_rank) noexcept nogil:
    """The rank of merging (left, right), its result in `result`; `no_rank` when absent."""
    return merge_table_rank_from(t, merge_table_start(t, left, right), left, right, result, no_rank)


cdef inline int32_t merge_table_rank_from(const MergeTable* t, uint64_t j, int32_t left, int32_t right,
                                          int32_t* result, int32_t no_rank) noexcept nogil:
    """`merge_table_rank`, the start slot j already known (`merge_table_start`)."""
    cdef uint64_t key = merge_key(left, right)
    cdef const MergeSlot* s
    while True:
        s = &t.slots[j]
        if s.key == key:
            result[0] = s.result
            return s.rank
        if s.key == NO_PAIR:
            return no_rank
        j = (j + 1) & t.mask
