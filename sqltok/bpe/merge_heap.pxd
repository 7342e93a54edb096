# cython: language_level=3
"""The merge loop of a long pretoken (over SHORT_PIECE tokens: Chinese, Japanese, Thai runs) in
O(n log n): a heap of pairs over a linked list of tokens. Each position remembers its pair's rank and
result, so a popped entry is checked without a second merge-table lookup."""
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libcpp.queue cimport priority_queue
from libcpp.vector cimport vector

from sqltok.bpe.backtrack cimport BacktrackScratch
from sqltok.bpe.merge_scan cimport NO_RANK
from sqltok.bpe.merge_table cimport MergeSlot, MergeTable, merge_table_rank
from sqltok.native.id_lists cimport IdVector


cdef cppclass MergeScratch:           # a thread's vectors for merging
    IdVector sym                      # the tokens being merged
    vector[int32_t] nxt               # heap merge: the linked list
    vector[int32_t] prv
    vector[int32_t] pair_rank         # heap merge: rank and result of the pair starting at each position
    vector[int32_t] pair_result
    priority_queue[uint64_t] heap
    BacktrackScratch backtrack


cdef inline void _set_pair(MergeScratch& s, int32_t pos, int32_t rank, int32_t result) noexcept nogil:
    """Record the rank and result of the pair starting at pos, and queue it when it merges."""
    s.pair_rank[pos] = rank
    s.pair_result[pos] = result
    if rank != NO_RANK:
        s.heap.push(~((<uint64_t>rank << 32) | <uint64_t>pos))


cdef inline void _push(const MergeTable* table, MergeScratch& s, int32_t pos) noexcept nogil:
    cdef int32_t result = 0
    cdef int32_t nx = s.nxt[pos]
    if nx < 0:
        s.pair_rank[pos] = NO_RANK
        return
    cdef int32_t r = merge_table_rank(table, s.sym[pos], s.sym[nx], &result, NO_RANK)
    _set_pair(s, pos, r, result)  # (not in one call: C leaves the order of arguments open)


cdef inline void merge_heap(const MergeTable* table, const MergeSlot* byte_pairs, bint guard, MergeScratch& s,
                            IdVector& out, const uint8_t* p) noexcept nogil:
    """Merge s.sym (any length) by rank into `out` (with `guard` never below the last rank applied).
    `p`: the bytes s.sym holds the tokens of (their first ranks come from `byte_pairs`, see
    merge_scan.ByteMerges), or NULL."""
    cdef int32_t n = <int32_t>s.sym.size()
    cdef int32_t i, pos, nx, r, last = -1
    cdef uint64_t key
    cdef const MergeSlot* bp
    s.nxt.resize(n)
    s.prv.resize(n)
    s.pair_rank.resize(n)
    s.pair_result.resize(n)
    for i in range(n):
        s.nxt[i] = i + 1 if i + 1 < n else -1
        s.prv[i] = i - 1
    s.pair_rank[n - 1] = NO_RANK
    while not s.heap.empty():
        s.heap.pop()
    for i in range(n - 1):
        if p != NULL:
            bp = &byte_pairs[(<size_t>p[i] << 8) | p[i + 1]]
            _set_pair(s, i, bp.rank, bp.result)
        else:
            _push(table, s, i)
    while not s.heap.empty():
        key = ~s.heap.top()
        s.heap.pop()
        pos = <int32_t>(key & <uint64_t>0xFFFFFFFFULL)
        r = <int32_t>(key >> 32)
        if s.sym[pos] < 0 or s.pair_rank[pos] != r or (guard and r < last):
            continue
        nx = s.nxt[pos]
        last = r
        s.sym[pos] = s.pair_result[pos]
        s.sym[nx] = -1
        s.nxt[pos] = s.nxt[nx]
        if s.nxt[nx] >= 0:
            s.prv[s.nxt[nx]] = pos
        if s.prv[pos] >= 0:
            _push(table, s, s.prv[pos])
        _push(table, s, pos)
    pos = 0
    while pos >= 0:
        out.push_back(s.sym[pos])
        pos = s.nxt[pos]
