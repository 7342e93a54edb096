# cython: language_level=3
"""Pretoken counts of a whole batch of texts, for counting in SQL: `batch_pretoken_counts` pretokenizes
every text of an Arrow batch and counts each distinct pretoken in an open-addressing table, so that
DuckDB unnests and groups the batch's distinct pretokens (about 96k for 2,048 documents of English)
instead of every occurrence (1.6M): the list vectors it builds and the `GROUP BY` behind them were
most of the time counting took. The counts are returned on the batch's first row, the other rows
getting empty lists: only their sum over rows means anything (see `sqltok_pretoken_counts`).

A long text is counted piece by piece, cut where its pretokens cannot change (`cut_points.pxd`), so
that the kernel's per-text work stays bounded and SQL need not cut documents (a copy of the corpus
through DuckDB) first. A slot holds its pretoken's first 8 bytes: most pretokens are found without
reading the text they were first seen in."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from sqltok.native.bytes_table cimport KEY_WORDS_MAX, bytes_hash, key_words, padded_word
from sqltok.pretokenizer.cut_points cimport CUT_PRETOKENS, cut_after
from sqltok.pretokenizer.matcher cimport N_PATTERNS, pretokenize_pattern

import numpy as np
import pyarrow as pa

from sqltok.native.first_row_counts import first_row_counts

cdef enum:
    LOOKAHEAD = 16          # pretokens whose slot is asked for ahead of their lookup
    MIN_SLOTS = 1024
    FIRST_SLOTS_MAX = 1 << 20   # a batch of long documents starts at 32 MiB of slots, then grows


cdef struct Slot:           # a distinct pretoken: its bytes are the input's values[start:start + length]
    uint64_t head           # its first 8 bytes, zero-padded
    uint64_t start
    uint32_t length
    uint32_t hash           # the high half of its bytes_hash
    int64_t count           # 0: an empty slot


cdef struct Key:            # a pretoken of the text being counted
    uint64_t hash
    uint64_t head


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
    empty.head = 0
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


cdef inline bint _same_tail(const uint8_t* a, const uint8_t* b, uint32_t n) noexcept nogil:
    """Whether a[8:n] == b[8:n] (n > 8): up to 16 bytes as one overlapping load each."""
    cdef uint64_t x, y
    if n <= 16:
        memcpy(&x, a + n - 8, 8)
        memcpy(&y, b + n - 8, 8)
        return x == y
    return memcmp(a + 8, b + 8, n - 8) == 0


cdef inline void _count(Table& t, const uint8_t* values, uint64_t start, uint32_t length, Key key) noexcept nogil:
    cdef uint64_t j = key.hash & t.mask
    cdef uint32_t high = <uint32_t>(key.hash >> 32)
    cdef Slot* s
    while True:
        s = &t.slots[j]
        if s.count == 0:
            s.head = key.head
            s.start = start
            s.length = length
            s.hash = high
            s.count = 1
            t.used.push_back(j)
            return
        if s.hash == high and s.head == key.head and s.length == length and \
                (length <= 8 or _same_tail(values + s.start, values + start, length)):
            s.count += 1
            return
        j = (j + 1) & t.mask


cdef void _count_piece(Table& t, const uint8_t* values, uint64_t a, uint64_t b, int pattern,
                       vector[int64_t]& ends, vector[Key]& keys) noexcept nogil:
    """Count the pretokens of values[a:b]."""
    cdef size_t k, m
    cdef uint64_t s = a, w[3]
    cdef int64_t n
    ends.clear()
    pretokenize_pattern(values + a, b - a, pattern, ends)
    m = ends.size()
    keys.resize(m)
    for k in range(m):
        n = a + ends[k] - s
        if n <= KEY_WORDS_MAX:
            keys[k].hash = key_words(values + s, n, values + b, w)
            keys[k].head = w[0]
        else:
            keys[k].hash = bytes_hash(values + s, n)
            keys[k].head = padded_word(values + s, 8)
        s = a + ends[k]
    s = a
    for k in range(m):
        if k + LOOKAHEAD < m:
            prefetch_write(&t.slots[keys[k + LOOKAHEAD].hash & t.mask])
        if 4 * (t.used.size() + 1) > 3 * t.slots.size():
            _grow(t, values)
        _count(t, values, s, <uint32_t>(a + ends[k] - s), keys[k])
        s = a + ends[k]


cdef void _count_text(Table& t, const uint8_t* values, uint64_t a, uint64_t b, int pattern,
                      int64_t piece_bytes, bint script_aware_cuts, bint newline_cuts,
                      vector[int64_t]& ends, vector[Key]& keys) noexcept nogil:
    """Count the pretokens of values[a:b], in pieces of about `piece_bytes` (0: whole)."""
    cdef uint64_t at = a, cut
    while at < b:
        if piece_bytes <= 0 or <int64_t>(b - at) <= piece_bytes:
            cut = b
        else:  # cut points are found in the whole text: they look back across the piece's start
            cut = a + <uint64_t>cut_after(values + a, <int64_t>(at - a) + piece_bytes, b - a, CUT_PRETOKENS,
                                          script_aware_cuts, newline_cuts)
        _count_piece(t, values, at, cut, pattern, ends, keys)
        at = cut


def batch_pretoken_counts(texts, int pattern, int64_t piece_bytes=0, bint script_aware_cuts=False,
                          bint newline_cuts=True) -> pa.Array:
    """Each distinct pretoken of the (large_)string array `texts` under pattern id `pattern`
    (`PATTERN_IDS`) with its count, all on the first row (list<struct<unit: large_string, n: int64>>,
    32-bit list offsets as DuckDB's UDFs take them); the other rows, and NULL texts, get empty lists.
    With `piece_bytes` > 0, texts longer than that are pretokenized in pieces cut at the pattern's
    cut points (`script_aware_cuts`, `newline_cuts`: its `PRETOKEN_CUTS`), with the same counts."""
    if not 0 <= pattern < N_PATTERNS:
        raise ValueError(f"pattern must be a pattern id (PATTERN_IDS), not {pattern!r}")
    cdef list keep = []
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    cdef BinaryView v = binary_view(texts, keep)
    cdef uint64_t slots = MIN_SLOTS
    while v.length and slots < FIRST_SLOTS_MAX and \
            slots * 8 < <uint64_t>(view_end(v, v.length - 1) - view_start(v, 0)) // 4:
        slots <<= 1  # about a slot per 32 bytes: the table rarely grows
    cdef Table t
    _empty_slots(t, slots)
    cdef vector[int64_t] ends
    cdef vector[Key] keys
    cdef int64_t r, total = 0
    cdef size_t k
    cdef Slot* s
    with nogil:
        for r in range(v.length):
            if view_valid(v, r):
                _count_text(t, v.values, view_start(v, r), view_end(v, r), pattern, piece_bytes, script_aware_cuts,
                            newline_cuts, ends, keys)
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
    return first_row_counts(units, counts, v.length)

