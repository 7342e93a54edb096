# cython: language_level=3
"""Each row's distinct token ids and how often each occurs: per-document histograms, which the
judge's frequency tables sum in SQL over several times fewer rows than one per token.

One pass over a large_list<int32> array with one stamp and one slot per id of the vocabulary (so
no hashing and no sorting), the GIL released; the lists are built from C vectors.
"""
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

import pyarrow as pa

from sqltok.native.arrow_buffers cimport buffer_address


cdef int64_t count_rows(const int64_t* offsets, const int32_t* values, int64_t rows, int64_t n_vocab,
                        vector[int64_t]& out_offsets, vector[int32_t]& out_ids,
                        vector[int32_t]& out_counts) noexcept nogil:
    """Fill the outputs; -1 when done, else the position of an id outside [0, n_vocab)."""
    cdef vector[int64_t] stamp = vector[int64_t](n_vocab, -1)   # the last row each id was seen in
    cdef vector[int64_t] slot = vector[int64_t](n_vocab)        # ... and its place in the outputs
    cdef int64_t r, k, row_start
    cdef int32_t i
    out_offsets.push_back(0)
    for r in range(rows):
        row_start = <int64_t>out_ids.size()
        for k in range(offsets[r], offsets[r + 1]):
            i = values[k]
            if i < 0 or i >= n_vocab:
                return k
            if stamp[i] == r:
                out_counts[slot[i]] += 1
            else:
                stamp[i] = r
                slot[i] = <int64_t>out_ids.size()
                out_ids.push_back(i)
                out_counts.push_back(1)
        out_offsets.push_back(<int64_t>out_ids.size())
    return -1


cdef object _lists(const vector[int64_t]& offsets, const vector[int32_t]& values, mask):
    data = (<const char*>values.data())[:values.size() * sizeof(int32_t)] if values.size() else b""
    offs = (<const char*>offsets.data())[:offsets.size() * sizeof(int64_t)]
    child = pa.Array.from_buffers(pa.int32(), values.size(), [None, pa.py_buffer(data)])
    return pa.LargeListArray.from_arrays(pa.Array.from_buffers(pa.int64(), offsets.size(), [None, pa.py_buffer(offs)]),
                                         child, mask=mask)


def id_counts_arrow(ids: "pa.LargeListArray", int64_t n_vocab) -> "tuple[pa.LargeListArray, pa.LargeListArray]":
    """(distinct ids, how often each occurs) of every row of a large_list<int32> array, both
    large_list<int32>, ids in the order they first occur in the row; NULL rows stay NULL.
    ValueError for an id outside [0, n_vocab)."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks() if ids.num_chunks else pa.array([], ids.type)
    values_array = ids.values
    cdef const int64_t* offsets = (<const int64_t*>buffer_address(ids.buffers()[1])) + <int64_t>ids.offset
    cdef const int32_t* values = (<const int32_t*>buffer_address(values_array.buffers()[1])) + <int64_t>values_array.offset
    cdef int64_t rows = len(ids), bad
    cdef vector[int64_t] out_offsets
    cdef vector[int32_t] out_ids, out_counts
    with nogil:
        bad = count_rows(offsets, values, rows, n_vocab, out_offsets, out_ids, out_counts)
    if bad >= 0:
        raise ValueError(f"token id {values[bad]} is outside this vocabulary of {n_vocab} ids")
    mask = ids.is_null() if ids.null_count else None
    return _lists(out_offsets, out_ids, mask), _lists(out_offsets, out_counts, mask)
