# cython: language_level=3
"""Encoding pretokens with a trained merge list, by rank, as the reference does: repeatedly apply the
lowest-index merge present in the pretoken (all its occurrences, left to right) among those ranked
after the last one applied, until none applies. (Going back to a lower rank could only matter after a
merge whose result duplicates an existing token; the reference never goes back.)

`count_tokens` is what held-back evaluation needs (compression = bytes / tokens).
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from arrow_buffers cimport BinaryView, binary_view, int64_values, view_end, view_start
from pair_table cimport PairTable, pack_pair, pair_table_free, pair_table_get, pair_table_get_or_insert, pair_table_init

BYTE_ALPHABET = tuple(list(range(0x00, 0xC0)) + list(range(0xC2, 0xF5)))


cdef class MergeRanks:
    """Pair -> (rank, result) lookup for a merge list."""
    cdef PairTable table
    cdef vector[int32_t] result
    cdef int32_t byte_id[256]

    def __cinit__(self, left, right, new_id):
        cdef Py_ssize_t n = len(left), i
        pair_table_init(&self.table, n)
        lefts, rights, news = left.to_pylist(), right.to_pylist(), new_id.to_pylist()
        for i in range(n):
            # The first (lowest-rank) merge of a pair wins; a pair is never merged twice in training.
            pair_table_get_or_insert(&self.table, pack_pair(lefts[i], rights[i]), <int32_t>i)
            self.result.push_back(news[i])
        for i in range(256):
            self.byte_id[i] = -1
        for i, b in enumerate(BYTE_ALPHABET):
            self.byte_id[b] = <int32_t>i

    def __dealloc__(self):
        pair_table_free(&self.table)

    cdef int encode(self, const uint8_t* s, Py_ssize_t n, vector[int32_t]& out) except -1 nogil:
        """The token ids of the byte string `s[:n]` into `out`; -1 in `out` for a non-UTF-8 byte."""
        cdef Py_ssize_t i, j, k
        cdef int32_t best, r, last = -1
        out.resize(n)
        for i in range(n):
            out[i] = self.byte_id[s[i]]
        while out.size() > 1:
            best = -1
            for i in range(<Py_ssize_t>out.size() - 1):
                r = pair_table_get(&self.table, pack_pair(out[i], out[i + 1]))
                if r > last and (best < 0 or r < best):
                    best = r
            if best < 0:
                break
            last = best
            j = 0
            i = 0
            k = <Py_ssize_t>out.size()
            while i < k:
                if i + 1 < k and pair_table_get(&self.table, pack_pair(out[i], out[i + 1])) == best:
                    out[j] = self.result[best]
                    i += 2
                else:
                    out[j] = out[i]
                    i += 1
                j += 1
            out.resize(j)
        return 0


def count_tokens(pretokens, counts, left, right, new_id) -> int:
    """Tokens the merge list (`left`, `right`, `new_id` int32 arrays, in rank order) gives for unique
    `pretokens` weighted by int64 `counts`."""
    cdef MergeRanks ranks = MergeRanks(left, right, new_id)
    cdef list keep = []
    cdef BinaryView v = binary_view(pretokens, keep)
    cdef const int64_t* cnt = int64_values(counts, keep)
    cdef int64_t n = len(pretokens), i, start, total = 0
    cdef vector[int32_t] ids
    with nogil:
        for i in range(n):
            start = view_start(v, i)
            ranks.encode(v.values + start, view_end(v, i) - start, ids)
            total += <int64_t>ids.size() * cnt[i]
    return total
