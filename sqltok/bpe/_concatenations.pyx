# cython: language_level=3
"""The merges a tiktoken-style vocabulary is made of: every way each token splits into two tokens,
looked up in a hash table of the tokens' bytes (`bytes_table.pxd`) without a Python slice or dict
lookup per split point (o200k: 1.4M split points)."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from sqltok.native.bytes_table cimport BytesTable, bytes_table_build, bytes_table_get


def concatenation_pairs(list tokens) -> list:
    """(id(t[:k]), id(t[k:]), id(t), id(t)) for every token t of `tokens` (bytes by id; None: no
    token) and split point k where both halves are tokens, sorted by id(t), then k."""
    cdef vector[int64_t] starts, ends
    cdef vector[int32_t] keys
    cdef int64_t at = 0
    cdef int32_t i
    parts = []
    for i, t in enumerate(tokens):
        starts.push_back(at)
        if t is not None:
            parts.append(t)
            at += len(<bytes>t)
            keys.push_back(i)
        ends.push_back(at)
    cdef bytes joined = b"".join(parts)
    cdef const uint8_t* data = <const uint8_t*><const char*>joined
    cdef BytesTable table
    cdef vector[int32_t] found      # left, right, token: three ids a pair
    cdef size_t q
    cdef int64_t k, n
    cdef int32_t left, right
    cdef const uint8_t* p
    with nogil:
        bytes_table_build(&table, data, starts.data(), ends.data(), keys)
        for q in range(keys.size()):
            i = keys[q]
            p = data + starts[i]
            n = ends[i] - starts[i]
            for k in range(1, n):
                left = bytes_table_get(&table, data, starts.data(), ends.data(), p, k)
                if left >= 0:
                    right = bytes_table_get(&table, data, starts.data(), ends.data(), p + k, n - k)
                    if right >= 0:
                        found.push_back(left)
                        found.push_back(right)
                        found.push_back(i)
    return [(found[q], found[q + 1], found[q + 2], found[q + 2]) for q in range(0, found.size(), 3)]
