# cython: language_level=3
"""The merge loop of a short pretoken, in arrays on the stack: repeatedly merge the adjacent pair of
lowest rank (leftmost on ties) until no pair is in the merge table, a scan over the pairs' ranks per
merge (quadratic, and the fastest below SHORT_PIECE tokens; SSE2 four ranks at a time, `lowest_rank.h`).
Reference models never go back to a rank below the last one applied (`guard`). The first ranks come
from a table of every pair of bytes."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from sqltok.bpe.merge_table cimport MergeSlot, MergeTable, merge_table_rank


cdef extern from "lowest_rank.h" nogil:
    size_t lowest_rank "sqltok_lowest_rank"(const int32_t* ranks, size_t n, int32_t* best) noexcept

cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* s[1:k+1] = s[2:k+2], r[0:k] = r[1:k+1], q[0:k] = q[1:k+1]: four of each per step where SSE2
       is there (each step loads before it stores, so the shift stays exact), then one at a time. */
    static inline void sqltok_shift_pairs(int32_t* s, int32_t* r, int32_t* q, size_t k) {
        size_t i = 0;
    #if defined(__SSE2__)
        for (; i + 4 <= k; i += 4) {
            _mm_storeu_si128((__m128i*)(s + i + 1), _mm_loadu_si128((const __m128i*)(s + i + 2)));
            _mm_storeu_si128((__m128i*)(r + i), _mm_loadu_si128((const __m128i*)(r + i + 1)));
            _mm_storeu_si128((__m128i*)(q + i), _mm_loadu_si128((const __m128i*)(q + i + 1)));
        }
    #endif
        for (; i < k; i++) {
            s[i + 1] = s[i + 2];
            r[i] = r[i + 1];
            q[i] = q[i + 1];
        }
    }
    """
    void shift_pairs "sqltok_shift_pairs"(int32_t* s, int32_t* r, int32_t* q, size_t k) noexcept nogil


cdef enum:
    SHORT_PIECE = 48          # pretokens up to this many bytes merge by a plain scan
    NO_RANK = 0x7FFFFFFF


cdef struct ByteMerges:       # the first step of merging a pretoken's bytes
    int32_t ids[256]          # each byte's token, -1: none
    vector[MergeSlot] pairs   # rank and result of every pair of bytes (a << 8 | b): 512 KiB, stays in cache


cdef inline bint load_bytes(const ByteMerges* b, const uint8_t* p, int64_t n, int32_t* sym, int32_t* ranks,
                            int32_t* results) noexcept nogil:
    """The byte tokens of p[:n] and the rank and result of each adjacent pair; False when a byte has
    no token."""
    cdef const MergeSlot* bp
    cdef int64_t i
    for i in range(n):
        sym[i] = b.ids[p[i]]
        if sym[i] < 0:
            return False
    for i in range(n - 1):
        bp = &b.pairs[(<size_t>p[i] << 8) | p[i + 1]]
        ranks[i] = bp.rank
        results[i] = bp.result
    return True


cdef inline bint merge_step(bint guard, int32_t* sym, int32_t* ranks, int32_t* results, size_t* n,
                            int32_t* last, int64_t* look) noexcept nogil:
    """Apply the merge of lowest rank (leftmost on ties; with `guard` never below `last`) to sym[:n],
    given every adjacent pair's rank and result; False when there is none. The ranks of the (at most
    two) pairs the merge creates are left for the caller to look up: their positions go to look[0..1]."""
    cdef int32_t best, floor = last[0]
    cdef size_t i, best_i, m = n[0]
    cdef uint64_t key, no_rank_key = <uint64_t>NO_RANK << 32, best_key = no_rank_key
    if guard:
        for i in range(m - 1):  # (rank, position) in one word: the least is the leftmost lowest rank, no branch
            key = (<uint64_t><uint32_t>ranks[i] << 32) | i
            key = key if ranks[i] >= floor else no_rank_key
            best_key = key if key < best_key else best_key
        best = <int32_t>(best_key >> 32)
        best_i = <size_t><uint32_t>best_key
    else:
        best_i = lowest_rank(ranks, m - 1, &best)
    if best == NO_RANK:
        return False
    last[0] = best
    sym[best_i] = results[best_i]
    shift_pairs(sym + best_i, ranks + best_i, results + best_i, m - 2 - best_i)  # (not memmove: short, setup.py)
    n[0] = m - 1
    look[0] = <int64_t>best_i - 1
    look[1] = <int64_t>best_i if best_i + 1 < m - 1 else -1
    return True


cdef inline void _look_up(const MergeTable* table, int32_t* sym, int32_t* ranks, int32_t* results,
                          const int64_t* look) noexcept nogil:
    cdef int64_t i
    for i in look[:2]:
        if i >= 0:
            ranks[i] = merge_table_rank(table, sym[i], sym[i + 1], &results[i], NO_RANK)


cdef inline size_t scan_merges(const MergeTable* table, bint guard, int32_t* sym, int32_t* ranks,
                               int32_t* results, size_t n, size_t stop=1) noexcept nogil:
    """Merge sym[:n] in place by rank (see `merge_step`), until `stop` tokens are left or no pair
    merges. Returns the new n."""
    cdef int32_t last = -1
    cdef int64_t look[2]
    while n > stop and merge_step(guard, sym, ranks, results, &n, &last, look):
        _look_up(table, sym, ranks, results, look)
    return n
