# cython: language_level=3
"""HF `tokenizers`' Precompiled normalizer (the spm_precompiled crate), which reads sentencepiece's
charsmap its own way: text goes grapheme by grapheme; a grapheme shorter than 6 bytes that a rule
is a prefix of becomes that rule's replacement whole (the shortest such rule: HF takes the first
result of the trie's prefix search, and the rest of the grapheme is dropped); otherwise each of its
characters becomes the replacement of the rule for exactly that character, or stays. sentencepiece
replaces the longest rule at each position instead; the two agree wherever each grapheme is one
character, which `HfSentencePieceTokenizer` uses to send only the other texts this way.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.string cimport string

from sqltok.sentencepiece.charsmap cimport Charsmap, _offset, _strnlen


cdef inline int64_t charsmap_shortest(const Charsmap* m, const uint8_t* key, int64_t n,
                                      const char** out, int64_t* out_len) noexcept nogil:
    """The length of the shortest rule that key[:n] starts with (0: none) and its replacement."""
    cdef size_t size = m.units.size(), node
    cdef uint32_t unit, value
    cdef int64_t i
    if size == 0:
        return 0
    node = _offset(m.units[0])
    for i in range(n):
        node ^= key[i]
        if node >= size:
            return 0
        unit = m.units[node]
        if (unit & <uint32_t>0x800000FFU) != key[i]:
            return 0
        node ^= _offset(unit)
        if (unit >> 8) & 1:
            if node >= size:
                return 0
            value = m.units[node] & 0x7FFFFFFF
            if value < m.strings.size():
                out[0] = m.strings.c_str() + value
                out_len[0] = _strnlen(out[0], m.strings.size() - value)
                return i + 1
    return 0


cdef inline int64_t _char_len(uint8_t b) noexcept nogil:
    return 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


cdef inline void hf_precompiled(const Charsmap* m, const uint8_t* p, const int64_t* ends, int64_t n_graphemes,
                                string& out) noexcept nogil:
    """Valid UTF-8 text p, cut into graphemes at byte offsets `ends`, through HF's Precompiled."""
    cdef int64_t g, start = 0, end, k, c
    cdef const char* r
    cdef int64_t rl
    out.clear()
    for g in range(n_graphemes):
        end = ends[g]
        if end - start < 6 and charsmap_shortest(m, p + start, end - start, &r, &rl):
            out.append(r, rl)
        else:
            k = start
            while k < end:
                c = _char_len(p[k])
                if charsmap_shortest(m, p + k, c, &r, &rl) == c:
                    out.append(r, rl)
                else:
                    out.append(<const char*>p + k, c)
                k += c
        start = end
