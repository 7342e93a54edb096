# cython: language_level=3
"""The distinct token ids and how often each occurs over the rows of each group of a batch: the
histograms the judge's frequency tables sum in SQL, over many times fewer rows than one per token
(or one per document and id).

One pass over a large_list<int32> array, the rows of a group one after the other, with one counter
per id of the vocabulary (so no hashing and no sorting of ids), the GIL released; the lists are
built from C vectors. A large batch is cut into contiguous shares of about equal ids, one a thread;
a group that spans shares has its shares' ids merged in share order, so the result is the same on
any number of threads. The counters are all 0 again after a call and kept for the next ones (a
pool), so that their pages are not faulted in and zeroed on every batch.
"""
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.vector cimport vector

import numpy as np
import pyarrow as pa

from sqltok.native.arrow_buffers cimport buffer_address


cdef enum:
    IDS_PER_THREAD = 32768          # a batch gets one thread per this many ids (and at least one)


cdef cppclass Runs:                 # the runs (groups) of some rows: ids in the order they first occur
    vector[int64_t] ends            # where each run's ids end in `ids`
    vector[int32_t] ids
    vector[int32_t] counts          # how often each of `ids` occurs in its run
    int64_t bad                     # the position of an id outside the vocabulary, or -1


cdef class _Counters:
    """One counter per id of the largest vocabulary seen, all 0 while in the pool."""
    cdef vector[int32_t] count


_spare: list = []  # counters no call is using (taken and given back under the GIL)


cdef inline void close_run(int32_t* count, int64_t first, Runs& out) noexcept nogil:
    """End the run whose ids are out.ids[first:]: their counts out, their counters back to 0."""
    cdef size_t k
    for k in range(<size_t>first, out.ids.size()):
        out.counts.push_back(count[out.ids[k]])
        count[out.ids[k]] = 0
    out.ends.push_back(<int64_t>out.ids.size())


cdef void count_runs(const int64_t* offsets, const int32_t* values, const int64_t* order, const int64_t* group,
                     int64_t lo, int64_t hi, int64_t n_vocab, int32_t* count, Runs& out) noexcept nogil:
    """Count rows order[lo..hi), a run for each group they hold (`group`: nondecreasing); out.bad
    the position of the first id outside [0, n_vocab), where counting stops. `count`: a counter per
    id, all 0: an id is new to its run when its counter was 0, and the run's counters go back to 0
    as it ends (or counting stops)."""
    cdef int64_t p, r, k, first = 0
    cdef int32_t i
    out.bad = -1
    for p in range(lo, hi):
        if p > lo and group[p] != group[p - 1]:
            close_run(count, first, out)
            first = <int64_t>out.ids.size()
        r = order[p]
        for k in range(offsets[r], offsets[r + 1]):
            i = values[k]
            if <uint32_t>i >= <uint64_t>n_vocab:
                out.bad = k
                close_run(count, first, out)
                return
            if count[i] == 0:
                out.ids.push_back(i)
            count[i] += 1
    if hi > lo:
        close_run(count, first, out)


cdef void merge_runs(vector[Runs]& shares, const int64_t* group, const int64_t* bounds, int32_t* count,
                     Runs& out) noexcept nogil:
    """The runs of the shares (rows bounds[t]..bounds[t+1]-1 of `group` in share t) as one: each
    group's ids in share order, an id seen in an earlier share kept where it first occurs and its
    counts added (`count`: a counter per id, all 0, and again so after)."""
    cdef int64_t g, run = -1, first = 0, a, j
    cdef size_t t, k
    for t in range(shares.size()):
        a = 0
        for k in range(shares[t].ends.size()):
            g = group[bounds[t]] + <int64_t>k  # a share holds every group from its first row's on
            if g != run:
                if run >= 0:
                    close_run(count, first, out)
                first = <int64_t>out.ids.size()
                run = g
            for j in range(a, shares[t].ends[k]):
                if count[shares[t].ids[j]] == 0:
                    out.ids.push_back(shares[t].ids[j])
                count[shares[t].ids[j]] += shares[t].counts[j]
            a = shares[t].ends[k]
    if run >= 0:
        close_run(count, first, out)


cdef object _lists(offsets: np.ndarray, const vector[int32_t]& values, mask):
    data = (<const char*>values.data())[:values.size() * sizeof(int32_t)] if values.size() else b""
    child = pa.Array.from_buffers(pa.int32(), values.size(), [None, pa.py_buffer(data)])
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), child, mask=mask)


def id_counts_arrow(ids: "pa.LargeListArray", int64_t n_vocab, groups: "pa.Array",
                    int threads=1) -> "tuple[pa.LargeListArray, pa.LargeListArray]":
    """(distinct ids, how often each occurs) over all rows of each group (`groups`, int64, one per
    row; NULL is a group too), both large_list<int32>, on the group's first non-NULL row (ids in the order they first
    occur), empty lists on its other rows; NULL rows stay NULL and count nothing. A sum over the
    rows is the same whatever rows share a batch. Up to `threads` threads, one per IDS_PER_THREAD
    ids. ValueError for an id outside [0, n_vocab)."""
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
    order_np = np.ascontiguousarray(valid[by_group], np.int64)
    cdef int64_t[::1] order = order_np
    cdef int64_t[::1] group = np.ascontiguousarray(key[by_group], np.int64)
    values_array = ids.values
    cdef const int64_t* offsets = (<const int64_t*>buffer_address(ids.buffers()[1])) + <int64_t>ids.offset
    cdef const int32_t* values = (<const int32_t*>buffer_address(values_array.buffers()[1])) + <int64_t>values_array.offset
    cdef int64_t n = len(valid)
    sizes = np.diff(ids.offsets.to_numpy())[order_np]
    total = int(sizes.sum())
    cdef int shares = max(1, min(threads, total // IDS_PER_THREAD))
    # share t: the rows (by group) from the first that starts at or after id total * t // shares
    targets = total * np.arange(shares + 1) // shares
    cdef int64_t[::1] bounds = np.searchsorted(np.cumsum(sizes) - sizes, targets).astype(np.int64)
    bounds[shares] = n
    counters = [_spare.pop() if _spare else _Counters() for _ in range(shares)]
    cdef vector[int32_t*] count
    cdef _Counters c
    for c in counters:
        if c.count.size() < <size_t>n_vocab:
            c.count.resize(n_vocab, 0)
        count.push_back(c.count.data())
    cdef vector[Runs] parts = vector[Runs](shares)
    cdef Runs merged
    cdef Runs* out = &parts[0]
    cdef int t
    if shares == 1:
        with nogil:
            count_runs(offsets, values, &order[0] if n else NULL, &group[0] if n else NULL, 0, n, n_vocab, count[0],
                       parts[0])
    else:
        for t in prange(shares, nogil=True, num_threads=shares, schedule="static"):
            count_runs(offsets, values, &order[0], &group[0], bounds[t], bounds[t + 1], n_vocab, count[t], parts[t])
    for t in range(shares):
        if parts[t].bad >= 0:
            _spare.extend(counters)
            raise ValueError(f"token id {values[parts[t].bad]} is outside this vocabulary of {n_vocab} ids")
    if shares > 1:
        with nogil:
            merge_runs(parts, &group[0], &bounds[0], count[0], merged)
        out = &merged
    _spare.extend(counters)
    lengths = np.zeros(len(ids), np.int64)
    lengths[valid[np.sort(first)]] = np.diff(np.asarray(<int64_t[:out.ends.size()]>out.ends.data()) if out.ends.size()
                                             else np.zeros(0, np.int64), prepend=0)
    list_offsets = np.concatenate([[0], np.cumsum(lengths)])
    mask = ids.is_null() if ids.null_count else None
    return _lists(list_offsets, out.ids, mask), _lists(list_offsets, out.counts, mask)
