# cython: language_level=3
"""Code points per Unicode script of each document of an Arrow string array (sqltok's Unicode 17
tables, the ones the pretokenizer splits runs by), rows split over threads with the GIL released."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

import numpy as np

from sqltok.native.arrow_buffers cimport BinaryView, view_end, view_start, view_valid
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.pretokenizer.matcher cimport SC_COUNT, SC_NAMES, uc_entry

SCRIPT_NAMES = [SC_NAMES[i].decode() for i in range(SC_COUNT)]


cdef inline uint32_t _next_code_point(const uint8_t* s, int64_t n, int64_t* i) noexcept nogil:
    """The code point at s[i[0]] (advancing i); an invalid byte counts as U+FFFD, one byte long."""
    cdef uint8_t b = s[i[0]]
    cdef int need, k
    cdef uint32_t cp
    if b < 0x80:
        i[0] += 1
        return b
    if b >= 0xF0:
        need, cp = 3, b & 0x07
    elif b >= 0xE0:
        need, cp = 2, b & 0x0F
    elif b >= 0xC2:
        need, cp = 1, b & 0x1F
    else:
        i[0] += 1
        return 0xFFFD
    if i[0] + need >= n:  # cut short by the end of the text
        i[0] += 1
        return 0xFFFD
    for k in range(1, need + 1):
        if s[i[0] + k] & 0xC0 != 0x80:
            i[0] += 1
            return 0xFFFD
        cp = (cp << 6) | (s[i[0] + k] & 0x3F)
    i[0] += need + 1
    return cp if cp <= 0x10FFFF else 0xFFFD


cdef void _count_rows(const BinaryView& v, int64_t first, int64_t last, int32_t* counts) noexcept nogil:
    cdef int64_t r, i, e
    cdef const uint8_t* s
    for r in range(first, last):
        if not view_valid(v, r):
            continue
        s = v.values + view_start(v, r)
        e = view_end(v, r) - view_start(v, r)
        i = 0
        while i < e:
            counts[r * SC_COUNT + (uc_entry(_next_code_point(s, e, &i)) >> 8)] += 1


cdef int64_t _count_work(void* task, const RowRun& run, int thread, int part, int64_t first,
                        int64_t last) noexcept nogil:
    _count_rows(run.view, first, last, <int32_t*>task)
    return -1


def script_counts_arrow(texts, int threads=1):
    """A rows x scripts int32 matrix of code point counts (script codes index SCRIPT_NAMES)."""
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    counts = np.zeros((run.view.length, SC_COUNT), np.int32)
    cdef int32_t[:, ::1] c = counts
    if run.view.length:
        rows_run(run, _count_work, NULL, &c[0, 0])
    return counts
