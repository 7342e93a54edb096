# cython: language_level=3
"""Pretoken counts of a whole batch of texts, for counting in SQL: `batch_pretoken_counts` pretokenizes
every text of an Arrow batch and counts each distinct pretoken in an open-addressing table, so that
DuckDB unnests and groups the batch's distinct pretokens (about 96k for 2,048 documents of English)
instead of every occurrence (1.6M): the list vectors it builds and the `GROUP BY` behind them were
most of the time counting took. The counts are returned on the batch's first row, the other rows
getting empty lists: only their sum over rows means anything (see `sqltok_pretoken_counts`)."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from sqltok.native.bytes_table cimport bytes_hash, piece_hashes
from sqltok.pretokenizer.matcher cimport N_PATTERNS, pretokenize_pattern

import numpy as np
import pyarrow as pa

cdef enum:
    LOOKAHEAD = 16          # pretokens whose slot is asked for ahead of their lookup
    MIN_SLOTS = 1024



cdef struct Slot:           # a distinct pretoken: its bytes are the input's values[start:start + length]
    uint64_t start
    uint32_t length
    uint32_t hash           # the high half of its bytes_hash (0: an empty slot holds count 0)
    int64_t count


cdef extern from *:
    """
    #define sqltok_prefetch_write(p) __builtin_prefetch((const void*)(p), 1)
    """
    void prefetch_write "sqltok_prefetch_write"(const void* p) noexcept nogil


cdef struct Table:
    vector[Slot] slots
    vector[uint64_t] used   # the slots in use, in the order their pretokens were first seen
    uint64_t mask


cdef void _empty_slots(Table& t, size_t n) noexcept nogil:
    """Make the table `n` empty slots (a power of two)."""
    cdef Slot empty
    empty.start = 0
    empty.length = 0
    empty.hash = 0
    empty.count = 0
    t.slots.assign(n, empty)
    t.mask = n - 1


cdef void _grow(Table& t, const uint8_t* values) noexcept nogil:
    """Double the table (the pretokens' hashes are recomputed from their bytes)."""
    cdef vector[Slot] old
    old.swap(t.slots)
    _empty_slots(t, 2 * old.size())
    cdef size_t k
    cdef uint64_t j
    for k in range(t.used.size()):
        j = bytes_hash(values + old[t.used[k]].start, old[t.used[k]].length) & t.mask
        while t.slots[j].count:
            j = (j + 1) & t.mask
        t.slots[j] = old[t.used[k]]
        t.used[k] = j


cdef void _count(Table& t, const uint8_t* values, uint64_t start, uint32_t length, uint64_t h) noexcept nogil:
    cdef uint64_t j = h & t.mask
    cdef uint32_t high = <uint32_t>(h >> 32)
    cdef Slot* s
    while True:
        s = &t.slots[j]
        if s.count == 0:
            s.start = start
            s.length = length
            s.hash = high
            s.count = 1
            t.used.push_back(j)
            return
        if s.hash == high and s.length == length and memcmp(values + s.start, values + start, length) == 0:
            s.count += 1
            return
        j = (j + 1) & t.mask


cdef int _count_text(Table& t, const uint8_t* values, uint64_t a, uint64_t b, int pattern,
                     vector[int64_t]& ends, vector[uint64_t]& hashes) except -1 nogil:
    """Count the pretokens of values[a:b]."""
    cdef size_t k, m
    cdef uint64_t s = a
    ends.clear()
    pretokenize_pattern(values + a, b - a, pattern, ends)
    m = ends.size()
    piece_hashes(values + a, b - a, ends, hashes)
    for k in range(m):
        if k + LOOKAHEAD < m:
            prefetch_write(&t.slots[hashes[k + LOOKAHEAD] & t.mask])
        if 4 * (t.used.size() + 1) > 3 * t.slots.size():
            _grow(t, values)
        _count(t, values, s, <uint32_t>(a + ends[k] - s), hashes[k])
        s = a + ends[k]
    return 0


def batch_pretoken_counts(texts, int pattern) -> pa.Array:
    """Each distinct pretoken of the (large_)string array `texts` under pattern id `pattern`
    (`PATTERN_IDS`) with its count, all on the first row (list<struct<unit: large_string, n: int64>>,
    32-bit list offsets as DuckDB's UDFs take them); the other rows, and NULL texts, get empty lists."""
    if not 0 <= pattern < N_PATTERNS:
        raise ValueError(f"pattern must be a pattern id (PATTERN_IDS), not {pattern!r}")
    cdef list keep = []
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    cdef BinaryView v = binary_view(texts, keep)
    cdef Table t
    cdef uint64_t slots = MIN_SLOTS
    while v.length and slots * 8 < <uint64_t>(view_end(v, v.length - 1) - view_start(v, 0)) // 4:
        slots <<= 1  # about a slot per 32 bytes: the table rarely grows
    _empty_slots(t, slots)
    cdef vector[int64_t] ends
    cdef vector[uint64_t] hashes
    cdef int64_t r, total = 0
    cdef size_t k
    cdef Slot* s
    with nogil:
        for r in range(v.length):
            if view_valid(v, r):
                _count_text(t, v.values, view_start(v, r), view_end(v, r), pattern, ends, hashes)
        for k in range(t.used.size()):
            total += t.slots[t.used[k]].length
    cdef int64_t n = t.used.size()
    offsets = np.empty(n + 1, np.int64)
    counts = np.empty(n, np.int64)
    data = PyBytes_FromStringAndSize(NULL, total)
    cdef int64_t[::1] off = offsets
    cdef int64_t[::1] cnt = counts
    cdef char* out = PyBytes_AS_STRING(data)
    with nogil:  # the distinct pretokens' bytes copied once, into the buffer Arrow takes
        off[0] = 0
        for k in range(<size_t>n):
            s = &t.slots[t.used[k]]
            memcpy(out + off[k], v.values + s.start, s.length)
            off[k + 1] = off[k] + s.length
            cnt[k] = s.count
    units = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    pairs = pa.StructArray.from_arrays([units, pa.array(counts)], names=["unit", "n"])
    rows = np.full(v.length + 1, n, np.int32)  # (numpy refuses an n of 2^31 or more)
    rows[0] = 0
    return pa.ListArray.from_arrays(pa.array(rows), pairs)
