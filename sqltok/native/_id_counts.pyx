# cython: language_level=3
"""The distinct token ids and how often each occurs over the rows of each group of a batch: the
histograms the judge's frequency tables sum in SQL, over many times fewer rows than one per token
(or one per document and id).

One pass over a large_list<int32> array, the rows of a group one after the other, with one counter
per id of the vocabulary (so no hashing and no sorting of ids), the GIL released; the lists are
built from C vectors.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

import numpy as np
import pyarrow as pa

from sqltok.native.arrow_buffers cimport buffer_address


cdef inline void close_run(vector[int32_t]& count, int64_t first, vector[int64_t]& run_ends, const vector[int32_t]& out_ids,
                           vector[int32_t]& out_counts) noexcept nogil:
    """End the run whose ids are out_ids[first:]: their counts out, their counters back to 0."""
    cdef size_t k
    for k in range(<size_t>first, out_ids.size()):
        out_counts.push_back(count[out_ids[k]])
        count[out_ids[k]] = 0
    run_ends.push_back(<int64_t>out_ids.size())


cdef int64_t count_runs(const int64_t* offsets, const int32_t* values, const int64_t* order, const uint8_t* starts,
                        int64_t n, int64_t n_vocab, vector[int64_t]& run_ends, vector[int32_t]& out_ids,
                        vector[int32_t]& out_counts) noexcept nogil:
    """Count rows order[0..n), a run (group) starting where `starts` is 1; -1 when done, else the
    position of an id outside [0, n_vocab). One counter per id of the vocabulary: an id is new to
    its run when its counter was 0, and the run's counters go back to 0 as it ends."""
    cdef vector[int32_t] count = vector[int32_t](n_vocab, 0)
    cdef int64_t p, r, k, first = 0
    cdef int32_t i
    for p in range(n):
        if starts[p] and p:
            close_run(count, first, run_ends, out_ids, out_counts)
            first = <int64_t>out_ids.size()
        r = order[p]
        for k in range(offsets[r], offsets[r + 1]):
            i = values[k]
            if <uint32_t>i >= <uint64_t>n_vocab:
                return k
            if count[i] == 0:
                out_ids.push_back(i)
            count[i] += 1
    if n:
        close_run(count, first, run_ends, out_ids, out_counts)
    return -1


cdef object _lists(offsets: np.ndarray, const vector[int32_t]& values, mask):
    data = (<const char*>values.data())[:values.size() * sizeof(int32_t)] if values.size() else b""
    child = pa.Array.from_buffers(pa.int32(), values.size(), [None, pa.py_buffer(data)])
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), child, mask=mask)


def id_counts_arrow(ids: "pa.LargeListArray", int64_t n_vocab,
                    groups: "pa.Array") -> "tuple[pa.LargeListArray, pa.LargeListArray]":
    """(distinct ids, how often each occurs) over all rows of each group (`groups`, int64, one per
    row; NULL is a group too), both large_list<int32>, on the group's first non-NULL row (ids in the order they first
    occur), empty lists on its other rows; NULL rows stay NULL and count nothing. A sum over the
    rows is the same whatever rows share a batch. ValueError for an id outside [0, n_vocab)."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks() if ids.num_chunks else pa.array([], ids.type)
    if len(groups) != len(ids):
        raise ValueError("one group per row")
    valid = np.flatnonzero(ids.is_valid().to_numpy(zero_copy_only=False))
    _, first, inverse = np.unique(np.asarray(groups.fill_null(-1), np.int64)[valid], return_index=True, return_inverse=True)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first)] = np.arange(len(first))  # groups by their first row
    key = rank[inverse]
    by_group = np.argsort(key, kind="stable")
    cdef int64_t[::1] order = np.ascontiguousarray(valid[by_group], np.int64)
    starts_np = np.ones(len(valid), np.uint8)
    starts_np[1:] = key[by_group][1:] != key[by_group][:-1]
    cdef uint8_t[::1] starts = starts_np
    values_array = ids.values
    cdef const int64_t* offsets = (<const int64_t*>buffer_address(ids.buffers()[1])) + <int64_t>ids.offset
    cdef const int32_t* values = (<const int32_t*>buffer_address(values_array.buffers()[1])) + <int64_t>values_array.offset
    cdef int64_t n = len(valid), bad
    cdef vector[int64_t] run_ends
    cdef vector[int32_t] out_ids, out_counts
    with nogil:
        bad = count_runs(offsets, values, &order[0] if n else NULL, &starts[0] if n else NULL, n, n_vocab,
                         run_ends, out_ids, out_counts)
    if bad >= 0:
        raise ValueError(f"token id {values[bad]} is outside this vocabulary of {n_vocab} ids")
    lengths = np.zeros(len(ids), np.int64)
    lengths[valid[np.sort(first)]] = np.diff(np.asarray(<int64_t[:run_ends.size()]>run_ends.data()) if run_ends.size()
                                             else np.zeros(0, np.int64), prepend=0)
    list_offsets = np.concatenate([[0], np.cumsum(lengths)])
    mask = ids.is_null() if ids.null_count else None
    return _lists(list_offsets, out_ids, mask), _lists(list_offsets, out_counts, mask)
