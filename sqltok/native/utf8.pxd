# cython: language_level=3
"""Strict UTF-8: the length of one valid character."""
from libc.stdint cimport int64_t, uint8_t, uint32_t


cdef inline int64_t valid_utf8_len(const uint8_t* p, int64_t n) noexcept nogil:
    """The length of the valid UTF-8 character at p (sentencepiece's DecodeUTF8), 0 when invalid."""
    cdef uint32_t cp
    if p[0] < 0x80:
        return 1
    if n >= 2 and (p[0] & 0xE0) == 0xC0 and (p[1] & 0xC0) == 0x80:
        cp = (p[0] & 0x1F) << 6 | (p[1] & 0x3F)
        return 2 if cp >= 0x80 else 0
    if n >= 3 and (p[0] & 0xF0) == 0xE0 and (p[1] & 0xC0) == 0x80 and (p[2] & 0xC0) == 0x80:
        cp = (p[0] & 0x0F) << 12 | (p[1] & 0x3F) << 6 | (p[2] & 0x3F)
        return 3 if cp >= 0x800 and not (0xD800 <= cp < 0xE000) else 0
    if n >= 4 and (p[0] & 0xF8) == 0xF0 and (p[1] & 0xC0) == 0x80 and (p[2] & 0xC0) == 0x80 \
            and (p[3] & 0xC0) == 0x80:
        cp = (p[0] & 0x07) << 18 | (p[1] & 0x3F) << 12 | (p[2] & 0x3F) << 6 | (p[3] & 0x3F)
        return 4 if 0x10000 <= cp <= 0x10FFFF else 0
    return 0
