# cython: language_level=3
"""Characters of normalized sentences: how often each occurs (`character_counts`, weighted by the
sentences' counts) and the sentences with every character outside the alphabet written as the
unknown mark U+2585 (`mark_unknown`), as SentencePiece's trainer does before it looks for pieces.
The GIL is released over the rows."""
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_values, large_binary_array
from sqltok.native.arrow_buffers cimport view_end, view_start

cdef const char* UNK_MARK = b"\xe2\x96\x85"


cdef inline int64_t _char_len(uint8_t b) noexcept nogil:
    return 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


cdef inline uint32_t _code_point(const uint8_t* s, int64_t k) noexcept nogil:
    if k == 1:
        return s[0]
    if k == 2:
        return ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
    if k == 3:
        return ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    return ((s[0] & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)


def character_counts(sentences, counts):
    """An int64 array over all code points: each one's count in the (well-formed UTF-8) sentences,
    a sentence counting as often as `counts` says."""
    cdef list keep = []
    cdef BinaryView v = binary_view(sentences, keep)
    cdef const int64_t* n = int64_values(counts, keep)
    out_arr = np.zeros(0x110000, dtype=np.int64)
    cdef int64_t[:] out = out_arr
    cdef int64_t i, j, e, k
    with nogil:
        for i in range(v.length):
            j, e = view_start(v, i), view_end(v, i)
            while j < e:
                k = _char_len(v.values[j])
                out[_code_point(v.values + j, k)] += n[i]
                j += k
    return out_arr


def mark_unknown(sentences, alphabet):
    """The sentences (large_binary) with each character c where alphabet[c] is 0 written as U+2585."""
    cdef list keep = []
    cdef BinaryView v = binary_view(sentences, keep)
    cdef const uint8_t[:] known = np.ascontiguousarray(alphabet, dtype=np.uint8)
    cdef vector[string] out
    cdef int64_t i, j, e, k
    out.resize(v.length)
    with nogil:
        for i in range(v.length):
            j, e = view_start(v, i), view_end(v, i)
            while j < e:
                k = _char_len(v.values[j])
                if known[_code_point(v.values + j, k)]:
                    out[i].append(<const char*>v.values + j, k)
                else:
                    out[i].append(UNK_MARK, 3)
                j += k
    return large_binary_array(out)
