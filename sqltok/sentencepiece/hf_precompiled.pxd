# cython: language_level=3
"""HF `tokenizers`' Precompiled normalizer (the spm_precompiled crate), which reads sentencepiece's
charsmap its own way: text goes grapheme by grapheme; a grapheme shorter than 6 bytes that a rule
is a prefix of becomes that rule's replacement whole (the shortest such rule: HF takes the first
result of the trie's prefix search, and the rest of the grapheme is dropped); otherwise each of its
characters becomes the replacement of the rule for exactly that character, or stays. sentencepiece
replaces the longest rule at each position instead; the two agree wherever each grapheme is one
character, which `HfSentencePieceTokenizer` uses to send only the other texts this way.
"""
from libc.stdint cimport int64_t, uint8_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.sentencepiece.charsmap cimport Charsmap, charsmap_search


cdef inline int64_t _char_len(uint8_t b) noexcept nogil:
    return 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


cdef inline void _replaced(vector[int64_t]* units, int64_t start, int64_t end, size_t out_start,
                           size_t out_end) noexcept nogil:
    if units != NULL:
        units.push_back(start)
        units.push_back(end)
        units.push_back(out_start)
        units.push_back(out_end)


cdef inline void hf_precompiled(const Charsmap* m, const uint8_t* p, const int64_t* ends, int64_t n_graphemes,
                                string& out, vector[int64_t]* units) noexcept nogil:
    """Valid UTF-8 text p, cut into graphemes at byte offsets `ends`, through HF's Precompiled; with
    `units` (else NULL), what each replacement replaced: its input's and its output's byte start
    and end, four numbers each, in order (for HF's alignment of the output to the input)."""
    cdef int64_t g, start = 0, end, k, c
    cdef const char* r
    cdef int64_t rl
    out.clear()
    for g in range(n_graphemes):
        end = ends[g]
        if end - start < 6 and charsmap_search(m, p + start, end - start, &r, &rl, True):
            _replaced(units, start, end, out.size(), out.size() + rl)
            out.append(r, rl)
        else:
            k = start
            while k < end:
                c = _char_len(p[k])
                if charsmap_search(m, p + k, c, &r, &rl, True) == c:
                    _replaced(units, k, k + c, out.size(), out.size() + rl)
                    out.append(r, rl)
                else:
                    out.append(<const char*>p + k, c)
                k += c
        start = end
