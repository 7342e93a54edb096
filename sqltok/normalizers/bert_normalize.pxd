# cython: language_level=3
"""HF's `BertNormalizer` on UTF-8 text, without the GIL: clean_text (drop control and format
characters, U+0000 and U+FFFD; whitespace becomes ' '), handle_chinese_chars (a space on each side of
a CJK ideograph), strip_accents (NFD, then drop nonspacing marks) and lowercase, in HF's order.

Same savings as the normalizers: ASCII is tested 8 bytes at a time (capitals lowercased by one OR
per 8 bytes) and only control bytes are looked at one by one; other characters read one flag word from the cached page; the
output is lazy. Character classes are HF tokenizers 0.23.3's (see tools/gen_normalization_tables.py).
"""
from libc.stdint cimport int16_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.string cimport string

from sqltok.normalizers.unicode_normalize cimport (NfWork, PageCache, S_BASE, S_COUNT, cached_flags, order_marks,
                                page_cache_init, push_hangul, push_mapped, replace_span, utf8_append,
                                utf8_decode)


cdef extern from "normalization_tables.h" nogil:
    const uint32_t NF_POOL[]
    uint32_t nf_bert_nfd_of(uint32_t cp)
    uint32_t nf_lower_of(uint32_t cp)
    enum:
        BERT_REMOVE
        BERT_SPACE
        BERT_CJK
        BERT_MN
        BERT_DECOMP
        BERT_LOWER


cdef struct BertOptions:
    bint clean
    bint chinese
    bint strip
    bint lower
    uint16_t mask           # flags of the characters some switch changes
    int16_t ascii[128]      # what each ASCII byte becomes (-1: dropped)


cdef inline BertOptions bert_options(bint clean, bint chinese, bint strip, bint lower) noexcept nogil:
    cdef BertOptions o
    cdef PageCache c
    cdef uint32_t f
    cdef int b
    page_cache_init(c)
    o.clean, o.chinese, o.strip, o.lower = clean, chinese, strip, lower
    o.mask = ((BERT_REMOVE | BERT_SPACE) if clean else 0) | (BERT_CJK if chinese else 0) \
        | ((BERT_DECOMP | BERT_MN) if strip else 0) | (BERT_LOWER if lower else 0)
    for b in range(128):
        f = cached_flags(c, b)
        o.ascii[b] = b
        if clean and f & BERT_REMOVE:
            o.ascii[b] = -1
        elif clean and f & BERT_SPACE:
            o.ascii[b] = 32
        elif lower and f & BERT_LOWER:
            o.ascii[b] = <int16_t>NF_POOL[nf_lower_of(b) >> 8]
    return o


cdef inline uint64_t block_special(uint64_t x) noexcept nogil:
    """0x80 in each byte of x that is not ASCII or is a control byte (< 0x20 or 0x7F), else 0
    (exact as "any", which is all the callers ask)."""
    cdef uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL
    cdef uint64_t y = x ^ (ones * 0x7F)
    return (x & high) | ((x - ones * 0x20) & ~x & high) | ((y - ones) & ~y & high)


cdef inline uint64_t block_capitals(uint64_t x) noexcept nogil:
    """0x80 in each byte of x (all ASCII) that is 'A'..'Z'."""
    cdef uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL
    return (ones * (127 + 0x5B) - (x & ones * 127)) & ~x & ((x & ones * 127) + ones * (127 - 0x40)) & high


cdef inline void bert_flush(NfWork& w, const BertOptions& o) noexcept nogil:
    """Order the pending code points' marks (NFD), drop nonspacing ones, lowercase, into w.tmp."""
    cdef size_t i, k
    cdef uint32_t cp, entry
    cdef uint32_t f
    if o.strip:
        order_marks(w, 0)
    for i in range(w.cps.size()):
        cp = w.cps[i]
        f = cached_flags(w.cache, cp)
        if o.strip and f & BERT_MN:
            continue
        if o.lower and f & BERT_LOWER:
            entry = nf_lower_of(cp)
            for k in range(entry >> 8, (entry >> 8) + (entry & 0xFF)):
                utf8_append(w.tmp, NF_POOL[k])
        else:
            utf8_append(w.tmp, cp)
    w.cps.clear()
    w.ccc.clear()


cdef inline void bert_segment(const uint8_t* p, int64_t n, const BertOptions& o, NfWork& w) noexcept nogil:
    """w.tmp = the BERT normalization of p[:n], a stretch of non-ASCII characters."""
    cdef int64_t i = 0
    cdef uint32_t cp
    cdef uint32_t f
    cdef bint cjk
    w.tmp.clear()
    w.cps.clear()
    w.ccc.clear()
    while i < n:
        i += utf8_decode(p + i, n - i, &cp)
        f = cached_flags(w.cache, cp)
        if o.clean and f & BERT_REMOVE:
            continue
        if o.clean and f & BERT_SPACE:
            bert_flush(w, o)
            w.tmp.push_back(32)
            continue
        cjk = o.chinese and f & BERT_CJK
        if cjk:
            bert_flush(w, o)
            w.tmp.push_back(32)
        if not o.strip:
            w.cps.push_back(cp)
            w.ccc.push_back(0)
        elif S_BASE <= cp < S_BASE + S_COUNT:
            push_hangul(w, cp)
        else:
            push_mapped(w, cp, nf_bert_nfd_of(cp))
        if cjk:
            bert_flush(w, o)
            w.tmp.push_back(32)
    bert_flush(w, o)


cdef inline bint bert_normalize_text(const uint8_t* p, int64_t n, const BertOptions& o, string& out,
                                     NfWork& w) noexcept nogil:
    """Append the BERT normalization of p[:n] to `out` and return True, or return False (leaving
    `out` alone) when it changes nothing."""
    cdef int64_t i = 0, k, copied = 0
    cdef uint64_t x, caps
    cdef uint32_t cp
    cdef int16_t m
    cdef int ln
    cdef bint changed = False
    while i < n:
        while i + 8 <= n:       # 8 ASCII bytes at a time: skipped, or lowercased with one OR
            memcpy(&x, p + i, 8)
            if block_special(x):
                break
            if o.lower:
                caps = block_capitals(x)
                if caps:
                    if not changed:
                        out.reserve(out.size() + n + n // 4 + 16)
                        changed = True
                    out.append(<const char*>p + copied, i - copied)
                    x |= caps >> 2
                    out.append(<const char*>&x, 8)
                    copied = i + 8
            i += 8
        if i >= n:
            break
        if p[i] < 0x80:
            m = o.ascii[p[i]]
            if m != p[i]:
                if not changed:
                    out.reserve(out.size() + n + n // 4 + 16)
                    changed = True
                out.append(<const char*>p + copied, i - copied)
                if m >= 0:
                    out.push_back(<char>m)
                copied = i + 1
            i += 1
            continue
        ln = utf8_decode(p + i, n - i, &cp)
        if not (cached_flags(w.cache, cp) & o.mask):
            i += ln
            continue
        k = i + ln
        while k < n and p[k] >= 0x80:
            ln = utf8_decode(p + k, n - k, &cp)
            if not (cached_flags(w.cache, cp) & o.mask):
                break
            k += ln
        bert_segment(p + i, k - i, o, w)
        changed = replace_span(p, n, i, k, w.tmp, out, &copied, changed)
        i = k
    if changed:
        out.append(<const char*>p + copied, n - copied)
    return changed
