# cython: language_level=3
"""SentencePiece's precompiled charsmap: a darts-clone double-array trie over UTF-8 byte strings whose
values point into a block of NUL-terminated replacement strings (nmt_nfkc, nfkc, nmt_nfkc_cf: NFKC
plus sentencepiece's own rules; empty for identity). The frame is a little-endian uint32 trie size,
the trie's uint32 units, then the strings (`model_proto.check_charsmap` names what is wrong with a
broken one; `charsmap_build` refuses one whose frame does not hold).

A lookup is darts-clone's `commonPrefixSearch` keeping the longest match, as the normalizer uses it
(or the shortest, as HF's Precompiled reads the charsmap).
Every unit index is checked against the array and every value against the strings, so a hostile
trie gives no match rather than a read out of bounds; a walk is bounded by the key's length.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector


cdef struct Charsmap:
    vector[uint32_t] units
    string strings              # the replacement strings, each NUL-terminated


cdef inline int charsmap_build(Charsmap* m, bytes blob) except -1:
    """From a precompiled charsmap blob (b"": no rules)."""
    cdef const uint8_t* p = <const uint8_t*>blob
    cdef uint32_t size
    m.units.clear()
    m.strings.clear()
    if not blob:
        return 0
    if len(blob) <= 4:
        raise ValueError("the precompiled charsmap is broken (shorter than its header)")
    size = p[0] | p[1] << 8 | p[2] << 16 | <uint32_t>p[3] << 24
    if size >= len(blob) - 4 or size % 4:
        raise ValueError("the precompiled charsmap is broken (its trie is larger than the blob)")
    cdef const uint8_t* q
    cdef size_t i
    m.units.resize(size // 4)
    for i in range(size // 4):
        q = p + 4 + 4 * i
        m.units[i] = q[0] | q[1] << 8 | q[2] << 16 | <uint32_t>q[3] << 24
    m.strings = blob[4 + size:]
    return 0


cdef inline int64_t _strnlen(const char* s, size_t limit) noexcept nogil:
    cdef size_t k = 0
    while k < limit and s[k] != 0:
        k += 1
    return k


cdef inline uint32_t _offset(uint32_t unit) noexcept nogil:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


cdef inline int64_t charsmap_search(const Charsmap* m, const uint8_t* key, int64_t n, const char** out,
                                    int64_t* out_len, bint shortest) noexcept nogil:
    """The length of the longest (or with `shortest` the shortest) rule that key[:n] starts with
    (0: none) and its replacement."""
    cdef size_t size = m.units.size(), node
    cdef uint32_t unit, value
    cdef int64_t i, best = 0
    cdef const char* s
    if size == 0:
        return 0
    node = _offset(m.units[0])
    for i in range(n):
        node ^= key[i]
        if node >= size:
            break
        unit = m.units[node]
        if (unit & <uint32_t>0x800000FFU) != key[i]:
            break
        node ^= _offset(unit)
        if (unit >> 8) & 1:
            if node >= size:
                break
            value = m.units[node] & 0x7FFFFFFF
            if value < m.strings.size():
                s = m.strings.c_str() + value
                best = i + 1
                out[0] = s
                out_len[0] = _strnlen(s, m.strings.size() - value)
                if shortest:
                    break
    return best


cdef inline int64_t charsmap_longest(const Charsmap* m, const uint8_t* key, int64_t n,
                                     const char** out, int64_t* out_len) noexcept nogil:
    """The length of the longest rule that key[:n] starts with (0: none) and its replacement."""
    return charsmap_search(m, key, n, out, out_len, False)
