# cython: language_level=3
"""SentencePiece's text normalizer (`normalizer.cc` `Normalizer::Normalize`), the one the encoder and
the Unigram trainer share: user-defined symbols pass as they are, otherwise the longest rule of the
precompiled charsmap replaces a prefix (or one character stays, a malformed byte becomes U+FFFD);
leading, trailing and repeated spaces are dropped (`remove_extra_whitespaces`), spaces become "▁"
(`escape_whitespaces`) and one "▁" goes before the text (`add_dummy_prefix`; after it when whitespace
is a suffix). sentencepiece drops every trailing "▁", one of the text's own too; HF's
`Replace(\\A +| +\\z)`, before its `Replace(" " -> "▁")`, drops only spaces (`spaces_only_trailing`:
the one "▁" that the text's trailing spaces collapsed to, when the text ends in spaces; the
charsmaps' rules give no two spaces, nor one after another character).

Given an `origin` vector, it also records sentencepiece's `norm_to_orig`: for each normalized byte
the input offset of the prefix it came from, and one more entry for the end (where trailing spaces
were dropped: the offset of the first of them). Without one nothing is recorded.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.utf8 cimport valid_utf8_len
from sqltok.sentencepiece.charsmap cimport Charsmap, charsmap_longest
from sqltok.wordpiece.byte_trie cimport ByteTrie, byte_trie_child


cdef struct Normalizer:
    Charsmap charsmap           # no units: no rules (identity)
    const ByteTrie* user        # the user-defined symbols under root `user_root` (NULL: none)
    int user_root
    bint add_dummy_prefix
    bint remove_extra_whitespaces
    bint escape_whitespaces
    bint suffix                 # treat_whitespace_as_suffix
    bint spaces_only_trailing   # remove_extra_whitespaces keeps a trailing "▁" of the text (HF's)


cdef inline int64_t user_match(const Normalizer* m, const uint8_t* p, int64_t n) noexcept nogil:
    """The length of the longest user-defined symbol p[:n] starts with, 0 when none."""
    cdef int32_t node
    cdef int64_t k = 1, found = 0
    if m.user == NULL:
        return 0
    node = m.user.roots[256 * m.user_root + p[0]]
    while node >= 0:
        if m.user.records[node] >= 0:
            found = k
        if k == n:
            break
        node = byte_trie_child(m.user.records.data() + node, p[k])
        k += 1
    return found


cdef inline int64_t normalize_prefix(const Normalizer* m, const uint8_t* p, int64_t n, const char** out,
                                     int64_t* out_len) noexcept nogil:
    """sentencepiece's NormalizePrefix: what the text's first bytes become and how many they are."""
    cdef int64_t k = user_match(m, p, n)
    if k > 0:
        out[0] = <const char*>p
        out_len[0] = k
        return k
    k = charsmap_longest(&m.charsmap, p, n, out, out_len)
    if k > 0:
        return k
    k = valid_utf8_len(p, n)
    if k == 0:
        out[0] = b"\xef\xbf\xbd"
        out_len[0] = 3
        return 1
    out[0] = <const char*>p
    out_len[0] = k
    return k


cdef inline void _append(const Normalizer* m, string& out, vector[int64_t]* origin, char c,
                         int64_t at) noexcept nogil:
    """One output character (a space escaped as "▁"), each of its bytes from input offset `at`."""
    if m.escape_whitespaces and c == 32:
        out.append(b"\xe2\x96\x81", 3)
        if origin != NULL:
            origin.push_back(at)
            origin.push_back(at)
            origin.push_back(at)
    else:
        out.push_back(c)
        if origin != NULL:
            origin.push_back(at)


cdef inline void _escape_only(const Normalizer* m, const uint8_t* p, int64_t n, string& out) noexcept nogil:
    """`normalize` without rules, user-defined symbols, whitespace removal or alignment: the text's
    runs copied as they are, spaces escaped when asked, each malformed byte as U+FFFD."""
    cdef int64_t i = 0, run, k
    if n == 0:
        return
    if not m.suffix and m.add_dummy_prefix:
        _append(m, out, NULL, 32, 0)
    while i < n:
        run = i
        while i < n and p[i] < 0x80 and not (p[i] == 32 and m.escape_whitespaces):
            i += 1
        if i > run:
            out.append(<const char*>p + run, i - run)
        if i == n:
            break
        if p[i] == 32:
            out.append(b"\xe2\x96\x81", 3)
            i += 1
            continue
        k = valid_utf8_len(p + i, n - i)
        if k == 0:
            out.append(b"\xef\xbf\xbd", 3)
            i += 1
        else:
            out.append(<const char*>p + i, k)
            i += k
    if m.suffix and m.add_dummy_prefix:
        _append(m, out, NULL, 32, n)


cdef inline void normalize(const Normalizer* m, const uint8_t* p, int64_t n, string& out,
                           vector[int64_t]* origin) noexcept nogil:
    """p[:n] normalized into `out`; its alignment into `origin` unless NULL."""
    cdef const char* r
    cdef int64_t rl, c, k, j, i = 0, space = 3 if m.escape_whitespaces else 1
    cdef bint prev_space
    out.clear()
    if origin != NULL:
        origin.clear()
    elif m.charsmap.units.size() == 0 and m.user == NULL and not m.remove_extra_whitespaces:
        _escape_only(m, p, n, out)
        return
    if m.remove_extra_whitespaces:
        while i < n:
            c = normalize_prefix(m, p + i, n - i, &r, &rl)
            if rl != 1 or r[0] != 32:
                break
            i += c
    if i >= n:
        return
    if not m.suffix and m.add_dummy_prefix:
        _append(m, out, origin, 32, i)
    prev_space = m.remove_extra_whitespaces
    while i < n:
        c = normalize_prefix(m, p + i, n - i, &r, &rl)
        k = 0
        if prev_space:
            while k < rl and r[k] == 32:
                k += 1
        if k < rl:
            for j in range(k, rl):
                _append(m, out, origin, r[j], i)
            prev_space = r[rl - 1] == 32
        i += c
        if not m.remove_extra_whitespaces:
            prev_space = False
    if m.remove_extra_whitespaces:
        while <int64_t>out.size() >= space and (
                prev_space if m.spaces_only_trailing
                else out.compare(out.size() - 3, 3, b"\xe2\x96\x81") == 0 if m.escape_whitespaces
                else out.back() == 32):
            out.resize(out.size() - space)
            prev_space = False      # spaces_only_trailing: the one space the trailing spaces became
            if origin != NULL:
                i = origin[0][out.size()]
                origin.resize(out.size())
    if m.suffix and m.add_dummy_prefix:
        _append(m, out, origin, 32, i)
    if origin != NULL:
        origin.push_back(i)
