# cython: language_level=3
"""Words as Python's `str.split()` finds them in UTF-8: maximal runs of characters that are not
whitespace in its sense (White_Space, plus the separators U+001C..U+001F)."""
from libc.stdint cimport uint32_t

from sqltok.pretokenizer.matcher cimport next_char


cdef inline bint is_space(uint32_t cp) noexcept nogil:
    """What str.split() splits on: White_Space, plus the separators U+001C..U+001F."""
    if cp < 0x80:
        return (9 <= cp <= 13) or (28 <= cp <= 32)
    return (cp == 0x85 or cp == 0xA0 or cp == 0x1680 or 0x2000 <= cp <= 0x200A or cp == 0x2028
            or cp == 0x2029 or cp == 0x202F or cp == 0x205F or cp == 0x3000)


cdef inline bint space_at(const unsigned char* s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t* nx) noexcept nogil:
    """Whether the character at byte i is whitespace; nx gets the offset of the next one."""
    cdef uint32_t cp = s[i]
    if cp < 0x80:  # most text: no decoding
        nx[0] = i + 1
        return (9 <= cp <= 13) or (28 <= cp <= 32)
    nx[0] = next_char(s, i, n, &cp)
    return is_space(cp)


cdef inline bint next_word(const unsigned char* s, Py_ssize_t n, Py_ssize_t* i, Py_ssize_t* a) noexcept nogil:
    """Find the next word at or after byte i[0]: it is s[a[0]:i[0]] afterwards. False when none is left."""
    cdef Py_ssize_t nx
    while i[0] < n and space_at(s, n, i[0], &nx):
        i[0] = nx
    if i[0] >= n:
        return False
    a[0] = i[0]
    while i[0] < n and not space_at(s, n, i[0], &nx):
        i[0] = nx
    return True
