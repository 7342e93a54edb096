# cython: language_level=3
"""Seed piece candidates from a suffix array of UTF-8 bytes, as SentencePiece 0.2.3's trainer finds
them: the nodes of the suffix tree (substrings that occur before at least two different bytes) that
lie on character boundaries, hold no NUL (a text's end) and are valid pieces, with their frequency.

`piece_is_valid` is SentencePiece's rule for what may be a piece: length, no unknown, NUL, tab or
space character or U+001F, U+2581 only where whitespace may go, one Unicode script (Hiragana and Katakana
count as Han, combining marks take their base's script), digits alone if asked."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memchr
from cython.operator cimport dereference as deref
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

import numpy as np

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_values, large_binary_array, view_end
from sqltok.native.arrow_buffers cimport view_start
from sqltok.pretokenizer.matcher cimport SC_COMMON, SC_INHERITED, uc_entry

cdef uint32_t WS = 0x2581
cdef uint32_t UNK = 0x2585
cdef uint32_t BOUNDARY = 0x1F  # what meta pieces in the text were replaced by
cdef int ANY = -1
cdef int BUCKET_SHIFT = 8  # text positions per entry of the table that starts a text search
cdef int HAN = 3          # sqltok's script codes (SCRIPT_NAMES): Han, Hiragana, Katakana
cdef int HIRAGANA = 4
cdef int KATAKANA = 5


cdef struct PieceRules:
    int max_length
    bint split_by_unicode_script
    bint split_by_number
    bint split_by_whitespace
    bint split_digits
    bint treat_whitespace_as_suffix
    bint allow_whitespace_only_pieces


cdef inline bint _is_digit(uint32_t c) noexcept nogil:
    return (0x30 <= c <= 0x39) or (0xFF10 <= c <= 0xFF19)


cdef inline int _script(uint32_t c) noexcept nogil:
    cdef int s = uc_entry(c) >> 8
    if s == HIRAGANA or s == KATAKANA or c == 0x30FC:
        return HAN
    return SC_COMMON if s == 0 else s


cdef bint _valid(const PieceRules& r, const uint32_t* cps, int64_t n) noexcept nogil:
    cdef int64_t pos
    cdef int prev = ANY, s
    cdef uint32_t c
    cdef bint all_ws = True
    if n == 0 or n > r.max_length:
        return False
    for pos in range(n):
        if cps[pos] != WS:
            all_ws = False
    for pos in range(n):
        c = cps[pos]
        if c == UNK or c == 0 or c == BOUNDARY or c == 0x20 or c > 0x10FFFF or (0xD800 <= c <= 0xDFFF):
            return False
        if c == WS:
            if not r.allow_whitespace_only_pieces or not all_ws:
                if r.treat_whitespace_as_suffix:
                    if (r.split_by_whitespace and pos < n - 1) or \
                            (not r.split_by_whitespace and pos < n - 1 and pos == 0):
                        return False
                elif (r.split_by_whitespace and pos > 0) or \
                        (not r.split_by_whitespace and pos > 0 and pos == n - 1):
                    return False
        else:
            s = _script(c)
            if s == SC_INHERITED:
                s = prev
            if not r.split_by_number and _is_digit(c):
                s = ANY
            if r.split_digits and _is_digit(c) and n > 1:
                return False
            if r.split_by_unicode_script and s != ANY and prev != ANY and prev != s:
                return False
            prev = s
    return True


cdef PieceRules _rules(dict flags):
    cdef PieceRules r
    r.max_length = flags["max_sentencepiece_length"]
    r.split_by_unicode_script = flags["split_by_unicode_script"]
    r.split_by_number = flags["split_by_number"]
    r.split_by_whitespace = flags["split_by_whitespace"]
    r.split_digits = flags["split_digits"]
    r.treat_whitespace_as_suffix = flags["treat_whitespace_as_suffix"]
    r.allow_whitespace_only_pieces = flags.get("allow_whitespace_only_pieces", False)
    return r


cdef inline uint32_t _decode(const uint8_t* s, int64_t* i) noexcept nogil:
    """The code point of the (well-formed) UTF-8 character at s[i[0]], advancing i."""
    cdef uint8_t b = s[i[0]]
    if b < 0x80:
        i[0] += 1
        return b
    if b < 0xE0:
        i[0] += 2
        return ((b & 0x1F) << 6) | (s[i[0] - 1] & 0x3F)
    if b < 0xF0:
        i[0] += 3
        return ((b & 0x0F) << 12) | ((s[i[0] - 2] & 0x3F) << 6) | (s[i[0] - 1] & 0x3F)
    i[0] += 4
    return ((b & 0x07) << 18) | ((s[i[0] - 3] & 0x3F) << 12) | ((s[i[0] - 2] & 0x3F) << 6) | (s[i[0] - 1] & 0x3F)


def piece_is_valid(str piece, dict flags) -> bool:
    """SentencePiece's test of whether `piece` may be a piece under the trainer `flags`."""
    cdef PieceRules r = _rules(flags)
    cdef vector[uint32_t] cps
    for ch in piece:
        cps.push_back(ord(ch))
    return _valid(r, cps.data(), cps.size())


def joined_bytes(texts):
    """(text, starts): the texts' bytes back to back, each followed by a NUL byte, as a uint8 array,
    and where each text begins (the last entry the total length)."""
    cdef list keep = []
    cdef BinaryView v = binary_view(texts, keep)
    cdef int64_t total = view_end(v, v.length - 1) - view_start(v, 0) + v.length if v.length else 0
    text_arr = np.zeros(total, dtype=np.uint8)
    starts_arr = np.zeros(v.length + 1, dtype=np.int64)
    cdef uint8_t[:] text = text_arr
    cdef int64_t[:] starts = starts_arr
    cdef int64_t i, j, k = 0
    with nogil:
        for i in range(v.length):
            starts[i] = k
            for j in range(view_start(v, i), view_end(v, i)):
                text[k] = v.values[j]
                k += 1
            text[k] = 0
            k += 1
        starts[v.length] = k
    return text_arr, starts_arr


ctypedef fused lcp_t:
    uint8_t
    uint16_t


cdef void _permuted_lcp(const uint8_t[:] text, const int32_t[:] sa, lcp_t[:] plcp, int32_t[:] phi, int64_t cap,
                        int64_t chunk) noexcept nogil:
    cdef int64_t n = text.shape[0], i, j, k, p, lo = 0, hi, l = 0
    while lo < n:
        hi = min(lo + chunk, n)
        for i in range(n):
            p = sa[i]
            if lo <= p < hi:
                phi[p - lo] = sa[i - 1] if i else -1  # Phi: the suffix before it in sa
        for j in range(lo, hi):
            k = phi[j - lo]
            if k < 0:
                l = 0
            else:  # l, one less than the last (capped) prefix, is no more than this one
                while l < cap and j + l < n and k + l < n and text[j + l] == text[k + l]:
                    l += 1
            plcp[j] = <lcp_t>l
            if l:
                l -= 1
        lo = hi


def permuted_lcp(text_arr, sa_arr, int64_t cap=0xFFFF, int64_t chunk=0):
    """The permuted LCP array of `text` (uint8) and its suffix array `sa` (int32), capped at `cap`: at
    each text position j, min(cap, the common prefix of the suffix j and the suffix before it in
    `sa`) (0 for the first), as uint8 (cap below 256) or uint16. Kaerkkaeinen, Manzini and Puglisi's
    Phi method, over the text in parts of `chunk` positions (default: an eighth of it, at least
    2^20), each part's Phi values found by a pass over `sa`: beside the result only one part's int32
    values are alive (Kasai's method needs a whole int32 rank array). A prefix capped above the
    longest node that can be a seed leaves every such node of the suffix tree as it is."""
    if not 0 < cap <= 0xFFFF:
        raise ValueError(f"cap {cap} is not in 1..65535")
    cdef const uint8_t[:] text = text_arr
    cdef const int32_t[:] sa = sa_arr
    cdef int64_t n = text.shape[0]
    if chunk <= 0:
        chunk = max(n // 8 + 1, 1 << 20)
    plcp_arr = np.empty(n, dtype=np.uint8 if cap <= 0xFF else np.uint16)
    cdef int32_t[:] phi = np.empty(min(chunk, n), dtype=np.int32)
    cdef uint8_t[:] narrow
    cdef uint16_t[:] wide
    if cap <= 0xFF:
        narrow = plcp_arr
        with nogil:
            _permuted_lcp(text, sa, narrow, phi, cap, chunk)
    else:
        wide = plcp_arr
        with nogil:
            _permuted_lcp(text, sa, wide, phi, cap, chunk)
    return plcp_arr


def frequent_substrings(text_arr, starts_arr, counts, sa_arr, plcp_arr, dict flags, dict extra):
    """(offset int64, length int32, score float32) arrays of the nodes of the suffix tree of `text`
    (`joined_bytes`' texts ended by NUL, each beginning at `starts`) that SentencePiece takes as seed
    candidates: two or more bytes on character boundaries, no NUL, 2..max_sentencepiece_length
    characters, a valid piece. A node's score is its frequency x its characters in float32; its
    frequency counts each text as often as `counts` says, plus `extra[its bytes]` (the entries used
    are removed from `extra`). `plcp` is `permuted_lcp(text, sa, cap)` with cap above 4 x
    max_sentencepiece_length bytes."""
    cdef PieceRules r = _rules(flags)
    cdef const uint8_t[:] text = text_arr
    cdef const int64_t[:] starts = starts_arr
    cdef const int32_t[:] sa = np.ascontiguousarray(sa_arr, dtype=np.int32)
    cdef bint wide = plcp_arr.dtype == np.uint16
    cdef const uint8_t[:] plcp8 = plcp_arr if not wide else np.zeros(0, np.uint8)
    cdef const uint16_t[:] plcp16 = plcp_arr if wide else np.zeros(0, np.uint16)
    cdef list keep = []
    cdef const int64_t* n_of = int64_values(counts, keep)
    cdef int64_t n = text.shape[0], i, lo, hi, mid, lb, d, off, k
    cdef int64_t n_texts = starts.shape[0] - 1
    cdef int64_t max_bytes = 4 * <int64_t>r.max_length  # a longer node has too many characters
    cdef bint ones = True                          # every text once: no search for a suffix's count
    for i in range(n_texts):
        if n_of[i] != 1:
            ones = False
            break
    # the stack of open nodes: left bound, depth, and the counts of the suffixes before the left bound
    cdef vector[int64_t] st_lb, st_d, st_w, out_off
    cdef vector[int32_t] out_len
    cdef vector[float] out_score
    cdef vector[uint32_t] cps
    cdef int64_t h, add, leaf, seen = 0, w_lb
    cdef unordered_map[string, int64_t] more
    cdef unordered_map[string, int64_t].iterator it
    cdef string key
    for w, c in extra.items():
        more[<string>w] = c
    cdef vector[int64_t] bucket                   # per BUCKET_SHIFT bytes: the text its first byte is in
    with nogil:
        if not ones:
            bucket.resize((n >> BUCKET_SHIFT) + 2)
            lo = 0
            for i in range(<int64_t>bucket.size()):
                while lo + 1 < n_texts and starts[lo + 1] <= (i << BUCKET_SHIFT):
                    lo += 1
                bucket[i] = lo
        st_lb.push_back(0)
        st_d.push_back(0)
        st_w.push_back(0)
        for i in range(1, n + 1):
            leaf = 1
            if not ones:
                lo = bucket[sa[i - 1] >> BUCKET_SHIFT]
                hi = bucket[(sa[i - 1] >> BUCKET_SHIFT) + 1]
                while lo < hi:   # the text that holds position sa[i - 1]
                    mid = (lo + hi + 1) // 2
                    if starts[mid] <= sa[i - 1]:
                        lo = mid
                    else:
                        hi = mid - 1
                leaf = n_of[lo]
            seen += leaf                           # the counts of suffixes sa[0 .. i-1]
            h = 0 if i == n else plcp16[sa[i]] if wide else plcp8[sa[i]]  # the prefix of suffixes sa[i - 1], sa[i]
            lb = i - 1
            w_lb = seen - leaf
            while h < st_d.back():
                lb = st_lb.back()
                d = st_d.back()
                w_lb = st_w.back()
                st_lb.pop_back()
                st_d.pop_back()
                st_w.pop_back()
                off = sa[lb]
                if d >= 2 and d <= max_bytes and memchr(&text[off], 0, d) == NULL and \
                        (text[off] & 0xC0) != 0x80 and (off + d == n or (text[off + d] & 0xC0) != 0x80):
                    cps.clear()
                    k = off
                    while k < off + d:
                        cps.push_back(_decode(&text[0], &k))
                    if cps.size() >= 2 and _valid(r, cps.data(), cps.size()):
                        add = 0
                        if more.size():
                            key.assign(<const char*>&text[off], d)
                            it = more.find(key)
                            if it != more.end():
                                add = deref(it).second
                                more.erase(it)
                        out_off.push_back(off)
                        out_len.push_back(<int32_t>d)
                        out_score.push_back(<float>(seen - w_lb + add) * <float>cps.size())
                if h > st_d.back():
                    st_lb.push_back(lb)
                    st_d.push_back(h)
                    st_w.push_back(w_lb)
            if h > st_d.back():
                st_lb.push_back(lb)
                st_d.push_back(h)
                st_w.push_back(w_lb)
    for w in list(extra):
        if more.find(<string>w) == more.end():
            del extra[w]
    offsets = np.zeros(out_off.size(), np.int64)
    if out_off.size():
        offsets[:] = <int64_t[:out_off.size()]>out_off.data()
    out_off.clear()
    out_off.shrink_to_fit()
    lengths = np.zeros(out_len.size(), np.int32)
    if out_len.size():
        lengths[:] = <int32_t[:out_len.size()]>out_len.data()
    out_len.clear()
    out_len.shrink_to_fit()
    score = np.zeros(out_score.size(), np.float32)
    if out_score.size():
        score[:] = <float[:out_score.size()]>out_score.data()
    return offsets, lengths, score


def gather(text_arr, offsets_arr, lengths_arr):
    """The byte strings text[offsets[k]:offsets[k] + lengths[k]] as a large_binary array."""
    cdef const uint8_t[:] text = text_arr
    cdef const int64_t[:] offsets = np.ascontiguousarray(offsets_arr, dtype=np.int64)
    cdef const int64_t[:] lengths = np.ascontiguousarray(lengths_arr, dtype=np.int64)
    cdef vector[string] out
    cdef int64_t k
    out.resize(offsets.shape[0])
    for k in range(offsets.shape[0]):
        out[k].assign(<const char*>&text[offsets[k]], lengths[k])
    return large_binary_array(out)
