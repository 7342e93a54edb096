# cython: language_level=3
"""A vocabulary's ids by their bytes, for the training loops: an open-addressing table of token ids
(-1: an empty slot) beside the vector of the tokens' bytes, probed by `bytes_hash` and compared
against those bytes, at most half full. One slot answers a lookup, and a new token costs no
allocation of its own (a std::unordered_map of strings hashes with std::hash, walks a bucket list and
allocates a node per token). Header-only: everything is inline."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.bytes_table cimport bytes_hash


cdef inline size_t token_slot(const vector[int32_t]& slots, const vector[string]& tokens,
                              const string& b) noexcept nogil:
    """The slot that holds the id of the token with bytes `b`, or the empty one it would take."""
    cdef uint64_t mask = slots.size() - 1
    cdef uint64_t j = bytes_hash(<const uint8_t*>b.data(), <int64_t>b.size()) & mask
    cdef int32_t t
    while True:
        t = slots[j]
        if t < 0 or tokens[t] == b:
            return j
        j = (j + 1) & mask


cdef inline int32_t token_find(const vector[int32_t]& slots, const vector[string]& tokens,
                               const string& b) noexcept nogil:
    """The id of the token with bytes `b`, or -1."""
    return slots[token_slot(slots, tokens, b)] if slots.size() else -1


cdef inline int32_t token_add(vector[int32_t]& slots, vector[string]& tokens, const string& b) except -2 nogil:
    """The id of the token with bytes `b`, appended to `tokens` (id: its index) when new."""
    cdef size_t j, k
    cdef int32_t tid = <int32_t>tokens.size()
    if 2 * (tokens.size() + 1) > slots.size():
        slots.assign(max(<size_t>1024, 2 * slots.size()), -1)
        for k in range(tokens.size()):
            slots[token_slot(slots, tokens, tokens[k])] = <int32_t>k
    j = token_slot(slots, tokens, b)
    if slots[j] >= 0:
        return slots[j]
    tokens.push_back(b)
    slots[j] = tid
    return tid
