# cython: language_level=3
"""SentencePiece's text normalizer over Arrow: the precompiled charsmap (a darts-clone double-array
trie of UTF-8 prefixes and the strings they become; the longest prefix that matches is replaced, any
other character is kept, a malformed byte becomes U+FFFD), then its whitespace rules: leading,
trailing and repeated spaces dropped (`remove_extra_whitespaces`), spaces written as U+2581
(`escape_whitespaces`) and one U+2581 put before the text (`add_dummy_prefix`, after it when
whitespace is a suffix). Rows are normalized with the GIL released."""
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, large_binary_array, view_end, view_start
from sqltok.native.arrow_buffers cimport view_valid

cdef const char* SPACE_SYMBOL = b"\xe2\x96\x81"
cdef const char* REPLACEMENT = b"\xef\xbf\xbd"


cdef struct Charsmap:
    const uint32_t* units   # the double array (NULL: no rules, the identity)
    int64_t n_units
    const char* normalized  # NUL-terminated replacement strings, addressed by the trie's values
    int64_t n_normalized


cdef inline int64_t _longest_rule(const Charsmap& m, const uint8_t* s, int64_t n, int64_t* value) noexcept nogil:
    """The length of the longest prefix of s[:n] the trie holds (0: none), its value in `value`."""
    cdef uint32_t unit
    cdef int64_t pos = 0, i, best = 0
    if m.units == NULL:
        return 0
    unit = m.units[0]
    pos ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
    for i in range(n):
        pos ^= s[i]
        if pos < 0 or pos >= m.n_units:
            break
        unit = m.units[pos]
        if (unit & <uint32_t>0x800000FFU) != s[i]:
            break
        pos ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
        if (unit >> 8) & 1:
            if pos < 0 or pos >= m.n_units:
                break
            best = i + 1
            value[0] = m.units[pos] & <uint32_t>0x7FFFFFFFU
    return best


cdef inline int64_t _utf8_length(const uint8_t* s, int64_t n) noexcept nogil:
    """The length of the well-formed UTF-8 character at s (0: malformed)."""
    cdef uint8_t b = s[0]
    cdef int64_t need, k
    cdef uint32_t cp
    if b < 0x80:
        return 1
    if b >= 0xF5 or b < 0xC2:
        return 0
    need = 1 if b < 0xE0 else 2 if b < 0xF0 else 3
    if need >= n:
        return 0
    cp = b & (0x1F if need == 1 else 0x0F if need == 2 else 0x07)
    for k in range(1, need + 1):
        if s[k] & 0xC0 != 0x80:
            return 0
        cp = (cp << 6) | (s[k] & 0x3F)
    if (need == 2 and (cp < 0x800 or (0xD800 <= cp <= 0xDFFF))) or (need == 3 and (cp < 0x10000 or cp > 0x10FFFF)):
        return 0
    return need + 1


cdef inline int64_t _prefix(const Charsmap& m, const uint8_t* s, int64_t n, const char** out,
                            int64_t* out_len) noexcept nogil:
    """Normalize the first character (or rule) of s[:n]: what it becomes in out/out_len; returns the
    bytes consumed."""
    cdef int64_t value = 0, k
    cdef int64_t length = _longest_rule(m, s, n, &value)
    if length > 0:
        out[0] = m.normalized + value
        k = 0
        while value + k < m.n_normalized and out[0][k] != 0:
            k += 1
        out_len[0] = k
        return length
    length = _utf8_length(s, n)
    if length == 0:
        out[0] = REPLACEMENT
        out_len[0] = 3
        return 1
    out[0] = <const char*>s
    out_len[0] = length
    return length


cdef inline void _add_space(string& out, bint escape) noexcept nogil:
    if escape:
        out.append(SPACE_SYMBOL, 3)
    else:
        out.push_back(b' ')


cdef inline bint _ends_with_space(const string& s, bint escape) noexcept nogil:
    if escape:
        return s.size() >= 3 and s.compare(s.size() - 3, 3, SPACE_SYMBOL) == 0
    return s.size() >= 1 and s[s.size() - 1] == b' '


cdef void _normalize(const Charsmap& m, const uint8_t* s, int64_t n, bint dummy_prefix, bint remove_extra,
                     bint escape, bint suffix, string& out) noexcept nogil:
    cdef const char* piece
    cdef int64_t piece_len, used, k
    cdef bint prev_space
    out.clear()
    if n == 0:
        return
    if remove_extra:  # leading whitespace
        while n > 0:
            used = _prefix(m, s, n, &piece, &piece_len)
            if not (piece_len == 1 and piece[0] == b' '):
                break
            s += used
            n -= used
    if n == 0:
        return
    if dummy_prefix and not suffix:
        _add_space(out, escape)
    prev_space = remove_extra
    while n > 0:
        used = _prefix(m, s, n, &piece, &piece_len)
        k = 0
        while prev_space and k < piece_len and piece[k] == b' ':
            k += 1
        if k < piece_len:
            while k < piece_len:
                if escape and piece[k] == b' ':
                    out.append(SPACE_SYMBOL, 3)
                else:
                    out.push_back(piece[k])
                k += 1
            prev_space = piece[piece_len - 1] == b' '
        s += used
        n -= used
        if not remove_extra:
            prev_space = False
    if remove_extra:
        while _ends_with_space(out, escape):
            out.resize(out.size() - (3 if escape else 1))
    if dummy_prefix and suffix:
        _add_space(out, escape)


def normalize_array(texts, bytes charsmap, bint add_dummy_prefix=True, bint remove_extra_whitespaces=True,
                    bint escape_whitespaces=True, bint treat_whitespace_as_suffix=False):
    """Each text of a (large_)string array normalized as SentencePiece does, as large_binary (NULL
    becomes empty). `charsmap` is a precompiled charsmap blob (b"": no rules)."""
    cdef list keep = []
    cdef BinaryView v = binary_view(texts, keep)
    cdef Charsmap m
    cdef uint32_t trie_size
    cdef const char* blob = charsmap
    cdef int64_t blob_len = len(charsmap), i
    cdef vector[string] out
    cdef string buf
    m.units = NULL
    m.n_units = 0
    m.normalized = NULL
    m.n_normalized = 0
    if blob_len:
        if blob_len <= 4:
            raise ValueError("the precompiled charsmap is broken (shorter than its header)")
        memcpy(&trie_size, blob, 4)
        if trie_size >= blob_len - 4 or trie_size % 4:
            raise ValueError("the precompiled charsmap is broken (its trie is larger than the blob)")
        m.units = <const uint32_t*>(blob + 4)
        m.n_units = trie_size // 4
        m.normalized = blob + 4 + trie_size
        m.n_normalized = blob_len - 4 - trie_size
    out.resize(v.length)
    with nogil:
        for i in range(v.length):
            if view_valid(v, i):
                _normalize(m, v.values + view_start(v, i), view_end(v, i) - view_start(v, i), add_dummy_prefix,
                           remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix, out[i])
    return large_binary_array(out)
