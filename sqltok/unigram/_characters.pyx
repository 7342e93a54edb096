# cython: language_level=3
"""Characters of normalized sentences: how often each occurs (`character_counts`, weighted by the
sentences' counts) and the sentences with every character outside the alphabet written as the
unknown mark U+2585 (`mark_unknown`), as SentencePiece's trainer does before it looks for pieces.
The GIL is released over the rows."""
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memcpy

import numpy as np
import pyarrow as pa

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_values
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
    """The sentences (large_binary) with each character c where alphabet[c] is 0 written as U+2585.
    The output is measured first, so that it is written once into buffers of its size."""
    cdef list keep = []
    cdef BinaryView v = binary_view(sentences, keep)
    cdef const uint8_t[:] known = np.ascontiguousarray(alphabet, dtype=np.uint8)
    offsets_arr = np.empty(v.length + 1, dtype=np.int64)
    cdef int64_t[:] offsets = offsets_arr
    cdef int64_t i, j, e, k, size = 0
    with nogil:
        offsets[0] = 0
        for i in range(v.length):
            j, e = view_start(v, i), view_end(v, i)
            while j < e:
                k = _char_len(v.values[j])
                size += k if known[_code_point(v.values + j, k)] else 3
                j += k
            offsets[i + 1] = size
    values_arr = np.empty(size, dtype=np.uint8)
    cdef uint8_t[:] values = values_arr
    with nogil:
        for i in range(v.length):
            j, e, size = view_start(v, i), view_end(v, i), offsets[i]
            while j < e:
                k = _char_len(v.values[j])
                if known[_code_point(v.values + j, k)]:
                    memcpy(&values[size], v.values + j, k)
                    size += k
                else:
                    memcpy(&values[size], UNK_MARK, 3)
                    size += 3
                j += k
    return pa.Array.from_buffers(pa.large_binary(), v.length, [None, pa.py_buffer(offsets_arr),
                                                              pa.py_buffer(values_arr)])
