# cython: language_level=3
"""Unicode normalization (NFC, NFD, NFKC, NFKD) of UTF-8 text, without the GIL.

The seed's three savings: ASCII is skipped 16 bytes at a time (no form changes it, nothing attaches
across it); every other character costs one read from the page (256 code points) of "could
normalization change it" flags and combining classes that the scan keeps at hand, or one read of a
per-page bit where nothing on the page can change; output is lazy: a text nothing
changes gives no output at all (the caller keeps the input), otherwise untouched stretches are copied
in bulk. Quick check: unflagged characters whose classes never go down are normalized already; only a
segment around the others (from the starter before them to the next unflagged starter) is
decomposed, canonically ordered and, for NFC/NFKC, composed; Hangul is algorithmic.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.algorithm cimport sort
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.portable cimport ctz64


cdef extern from "normalization_tables.h" nogil:
    const char* NF_UNICODE_VERSION
    const uint32_t NF_POOL[]
    const uint8_t NF_FLAGS_PAGE[]
    const uint32_t NF_FLAGS_BLOCK[]
    const uint8_t NF_CLEAN_PAGE[]
    const uint64_t NF_COMPOSE_KEYS[]
    const uint32_t NF_COMPOSE_VALUES[]
    const uint32_t NF_COMPOSE_MASK
    uint8_t nf_ccc_of(uint32_t cp)
    uint32_t nf_canonical_of(uint32_t cp)
    uint32_t nf_compat_of(uint32_t cp)
    uint32_t nf_compose_slot(uint32_t a, uint32_t b)
    enum:
        NF_CHANGE_NFD
        NF_CHANGE_NFKD
        NF_CHANGE_NFC
        NF_CHANGE_NFKC


cdef enum:
    FORM_NFC = 0
    FORM_NFD = 1
    FORM_NFKC = 2
    FORM_NFKD = 3
    S_BASE = 0xAC00
    L_BASE = 0x1100
    V_BASE = 0x1161
    T_BASE = 0x11A7
    L_COUNT = 19
    V_COUNT = 21
    T_COUNT = 28
    N_COUNT = 588
    S_COUNT = 11172


cdef struct PageCache:
    # The flags of the page (256 code points) the scan is in: one read per character while the text
    # stays in one script.
    uint32_t page
    const uint32_t* block


cdef struct NfWork:
    # Per-thread scratch for a segment: code points, their combining classes, its UTF-8.
    vector[uint32_t] cps
    vector[uint8_t] ccc
    vector[uint64_t] keys
    string tmp
    PageCache cache


cdef inline void page_cache_init(PageCache& c) noexcept nogil:
    c.page = 0xFFFFFFFF
    c.block = NULL


cdef inline uint32_t cached_flags(PageCache& c, uint32_t cp) noexcept nogil:
    """Flag bits of cp, its combining class in bits 16..23."""
    cdef uint32_t page = cp >> 8
    if page != c.page:
        c.page = page
        c.block = NF_FLAGS_BLOCK + (<uint32_t>NF_FLAGS_PAGE[page] << 8)
    return c.block[cp & 0xFF]


cdef inline int64_t ascii_end(const uint8_t* p, int64_t i, int64_t n) noexcept nogil:
    """The first index >= i of a non-ASCII byte (or n), testing 16 bytes at a time."""
    cdef uint64_t a, b, m
    while i + 16 <= n:
        memcpy(&a, p + i, 8)
        memcpy(&b, p + i + 8, 8)
        if (a | b) & 0x8080808080808080ULL:
            m = a & 0x8080808080808080ULL
            if m:
                return i + (ctz64(m) >> 3)
            return i + 8 + (ctz64(b & 0x8080808080808080ULL) >> 3)
        i += 16
    while i < n and p[i] < 0x80:
        i += 1
    return i


cdef inline int utf8_decode(const uint8_t* p, int64_t n, uint32_t* cp) noexcept nogil:
    """Decode the character at p (n bytes available, valid UTF-8 expected); its length in bytes."""
    cdef uint8_t b = p[0]
    if b < 0x80:
        cp[0] = b
        return 1
    if b < 0xE0 and n >= 2:
        cp[0] = (b & 0x1F) << 6 | (p[1] & 0x3F)
        return 2
    if b < 0xF0 and n >= 3:
        cp[0] = (b & 0x0F) << 12 | (p[1] & 0x3F) << 6 | (p[2] & 0x3F)
        return 3
    if n >= 4:
        cp[0] = ((b & 0x07) << 18 | (p[1] & 0x3F) << 12 | (p[2] & 0x3F) << 6 | (p[3] & 0x3F)) & 0x1FFFFF
        if cp[0] > 0x10FFFF:
            cp[0] = 0xFFFD
        return 4
    cp[0] = 0xFFFD
    return <int>n


cdef inline void utf8_append(string& out, uint32_t cp) noexcept nogil:
    if cp < 0x80:
        out.push_back(<char>cp)
    elif cp < 0x800:
        out.push_back(<char>(0xC0 | cp >> 6))
        out.push_back(<char>(0x80 | (cp & 0x3F)))
    elif cp < 0x10000:
        out.push_back(<char>(0xE0 | cp >> 12))
        out.push_back(<char>(0x80 | (cp >> 6 & 0x3F)))
        out.push_back(<char>(0x80 | (cp & 0x3F)))
    else:
        out.push_back(<char>(0xF0 | cp >> 18))
        out.push_back(<char>(0x80 | (cp >> 12 & 0x3F)))
        out.push_back(<char>(0x80 | (cp >> 6 & 0x3F)))
        out.push_back(<char>(0x80 | (cp & 0x3F)))


cdef inline void push_mapped(NfWork& w, uint32_t cp, uint32_t entry) noexcept nogil:
    """Append cp's mapping (an `offset << 8 | length` table entry, 0 = cp itself) with classes."""
    cdef uint32_t k, c
    if entry == 0:
        w.cps.push_back(cp)
        w.ccc.push_back(nf_ccc_of(cp))
        return
    for k in range(entry >> 8, (entry >> 8) + (entry & 0xFF)):
        c = NF_POOL[k]
        w.cps.push_back(c)
        w.ccc.push_back(nf_ccc_of(c))


cdef inline void push_hangul(NfWork& w, uint32_t cp) noexcept nogil:
    """The algorithmic decomposition of a Hangul syllable."""
    cdef uint32_t s = cp - S_BASE
    w.cps.push_back(L_BASE + s // N_COUNT)
    w.cps.push_back(V_BASE + (s % N_COUNT) // T_COUNT)
    w.ccc.push_back(0)
    w.ccc.push_back(0)
    if s % T_COUNT:
        w.cps.push_back(T_BASE + s % T_COUNT)
        w.ccc.push_back(0)


cdef inline void order_marks(NfWork& w, size_t first) noexcept nogil:
    """Canonical ordering of w.cps[first:]: each run of non-zero classes stably sorted by class
    (insertion sort for short runs, a keyed sort for long ones, so that any run is O(n log n))."""
    cdef size_t n = w.cps.size(), i = first, j, k, start
    cdef uint32_t c
    cdef uint8_t cc
    while i < n:
        if w.ccc[i] == 0:
            i += 1
            continue
        start = i
        while i < n and w.ccc[i] != 0:
            i += 1
        if i - start <= 32:
            for j in range(start + 1, i):
                c, cc = w.cps[j], w.ccc[j]
                k = j
                while k > start and w.ccc[k - 1] > cc:
                    w.cps[k], w.ccc[k] = w.cps[k - 1], w.ccc[k - 1]
                    k -= 1
                w.cps[k], w.ccc[k] = c, cc
        else:
            w.keys.clear()
            for j in range(start, i):
                w.keys.push_back(<uint64_t>w.ccc[j] << 56 | <uint64_t>(j - start) << 21 | w.cps[j])
            sort(w.keys.begin(), w.keys.end())
            for j in range(start, i):
                w.cps[j] = <uint32_t>(w.keys[j - start] & 0x1FFFFF)
                w.ccc[j] = <uint8_t>(w.keys[j - start] >> 56)


cdef inline uint32_t compose_pair(uint32_t a, uint32_t b) noexcept nogil:
    """The primary composite of a and b, or 0."""
    cdef uint32_t s, j
    cdef uint64_t key
    if L_BASE <= a < L_BASE + L_COUNT and V_BASE <= b < V_BASE + V_COUNT:
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT
    if S_BASE <= a < S_BASE + S_COUNT and (a - S_BASE) % T_COUNT == 0 and T_BASE < b < T_BASE + T_COUNT:
        return a + (b - T_BASE)
    key = <uint64_t>a << 21 | b
    j = nf_compose_slot(a, b)
    while NF_COMPOSE_KEYS[j]:
        if NF_COMPOSE_KEYS[j] == key:
            return NF_COMPOSE_VALUES[j]
        j = (j + 1) & NF_COMPOSE_MASK
    return 0


cdef inline void compose(NfWork& w) noexcept nogil:
    """Canonical composition of w.cps (already decomposed and ordered), in place."""
    cdef size_t n = w.cps.size(), i, out = 1, starter = 0
    cdef uint32_t c, composite
    cdef int last
    if n == 0:
        return
    last = 0 if w.ccc[0] == 0 else 256     # 256: no starter yet, nothing composes
    for i in range(1, n):
        c = w.cps[i]
        composite = compose_pair(w.cps[starter], c)
        if composite and (last < w.ccc[i] or last == 0):
            w.cps[starter] = composite
            continue
        if w.ccc[i] == 0:
            starter = out
        last = w.ccc[i]
        w.cps[out] = c
        w.ccc[out] = w.ccc[i]
        out += 1
    w.cps.resize(out)
    w.ccc.resize(out)


cdef inline void normalize_segment(const uint8_t* p, int64_t n, int form, NfWork& w) noexcept nogil:
    """w.tmp = the normal form of the UTF-8 segment p[:n]."""
    cdef int64_t i = 0
    cdef uint32_t cp
    cdef bint compat = form == FORM_NFKC or form == FORM_NFKD
    w.cps.clear()
    w.ccc.clear()
    while i < n:
        i += utf8_decode(p + i, n - i, &cp)
        if S_BASE <= cp < S_BASE + S_COUNT:
            push_hangul(w, cp)
        else:
            push_mapped(w, cp, nf_compat_of(cp) if compat else nf_canonical_of(cp))
    order_marks(w, 0)
    if form == FORM_NFC or form == FORM_NFKC:
        compose(w)
    w.tmp.clear()
    for i in range(<int64_t>w.cps.size()):
        utf8_append(w.tmp, w.cps[i])


cdef inline uint32_t form_change(int form) noexcept nogil:
    if form == FORM_NFC:
        return NF_CHANGE_NFC
    if form == FORM_NFD:
        return NF_CHANGE_NFD
    if form == FORM_NFKC:
        return NF_CHANGE_NFKC
    return NF_CHANGE_NFKD


cdef inline bint replace_span(const uint8_t* p, int64_t n, int64_t start, int64_t end, const string& repl,
                              string& out, int64_t* copied, bint changed) noexcept nogil:
    """Lazy output of a text p[:n]: when `repl` differs from p[start:end], append the untouched text
    since `copied` and `repl` to `out` (reserving once, on the first change). Whether anything
    changed so far."""
    if <int64_t>repl.size() == end - start and memcmp(repl.data(), p + start, end - start) == 0:
        return changed
    if not changed:
        out.reserve(out.size() + n + n // 4 + 16)
    out.append(<const char*>p + copied[0], start - copied[0])
    out.append(repl)
    copied[0] = end
    return True


cdef inline int64_t hangul_syllable(const uint8_t* p, int64_t n, int64_t boundary, int64_t i, uint32_t v,
                                    NfWork& w) noexcept nogil:
    """Composing forms, a V jamo at i right after an L jamo at `boundary`: write the syllable (with a
    T jamo that follows) to w.tmp and return where it ends, or return -1 when what follows is not a
    starter that cannot change (the general path decides then)."""
    cdef uint32_t l, t, f
    cdef int64_t k = i + 3
    if boundary != i - 3 or i < 3:
        return -1
    utf8_decode(p + boundary, 3, &l)
    if not L_BASE <= l < L_BASE + L_COUNT:
        return -1
    l = S_BASE + ((l - L_BASE) * V_COUNT + (v - V_BASE)) * T_COUNT
    if k + 3 <= n:
        utf8_decode(p + k, 3, &t)
        if T_BASE < t < T_BASE + T_COUNT:
            l += t - T_BASE
            k += 3
    if k < n and p[k] >= 0x80:
        utf8_decode(p + k, n - k, &t)
        f = cached_flags(w.cache, t)
        if f & (NF_CHANGE_NFC | NF_CHANGE_NFKC) or f >> 16:
            return -1
    w.tmp.clear()
    utf8_append(w.tmp, l)
    return k


cdef inline bint normalize_text(const uint8_t* p, int64_t n, int form, string& out, NfWork& w) noexcept nogil:
    """Append the normal form of p[:n] to `out` and return True, or return False (leaving `out`
    alone) when p[:n] is already normalized."""
    cdef uint32_t change = form_change(form), f, page, ccc, last_ccc = 0, key, word
    cdef const uint32_t* block
    cdef uint8_t lead, second
    cdef int64_t i = 0, k, boundary = 0, copied = 0
    cdef int ln
    cdef uint32_t cp
    cdef bint changed = False
    cdef bint composing = form == FORM_NFC or form == FORM_NFKC
    while i < n:
        if p[i] < 0x80:
            i = ascii_end(p, i, n)
            boundary = i - 1
            last_ccc = 0
            continue
        ln = utf8_decode(p + i, n - i, &cp)
        page = cp >> 8
        if page != w.cache.page and NF_CLEAN_PAGE[page] & change:
            i += ln                 # a page where nothing changes (CJK ideographs, Hangul syllables...)
            while i + 3 <= n and p[i] & 0xF0 == 0xE0 and NF_CLEAN_PAGE[(p[i] & 0x0F) << 4 | (p[i + 1] >> 2 & 0x0F)] & change:
                i += 3              # and the next 3-byte characters on such pages, undecoded
            boundary = i - 1        # within the last character skipped: it is a starter that cannot change
            while p[boundary] & 0xC0 == 0x80:
                boundary -= 1
            last_ccc = 0
            continue
        f = cached_flags(w.cache, cp)
        ccc = f >> 16
        if not (f & change) and (ccc == 0 or ccc >= last_ccc):
            if ccc == 0:
                boundary = i
            last_ccc = ccc
            i += ln
            if ln == 3:     # the next 3-byte characters of the same page (Thai, Devanagari...), undecoded
                lead, second = p[i - 3], p[i - 2] & 0xFC
                key = lead | <uint32_t>second << 8
                block = w.cache.block
                while i + 3 <= n:
                    if i + 4 <= n:      # one load for the lead byte, the page bits and the index
                        memcpy(&word, p + i, 4)
                    else:
                        word = p[i] | <uint32_t>p[i + 1] << 8 | <uint32_t>p[i + 2] << 16
                    if word & 0xFCFF != key:
                        break
                    f = block[(word >> 2 & 0xC0) | (word >> 16 & 0x3F)]
                    ccc = f >> 16
                    if (f & change) | ((ccc != 0) & (ccc < last_ccc)):   # without branches on marks
                        break
                    boundary = i if ccc == 0 else boundary
                    last_ccc = ccc
                    i += 3
            continue
        k = -1
        if composing and V_BASE <= cp < V_BASE + V_COUNT:
            k = hangul_syllable(p, n, boundary, i, cp, w)
        if k < 0:
            k = i + ln          # the segment ends at the next starter that cannot change
            while k < n and p[k] >= 0x80:
                ln = utf8_decode(p + k, n - k, &cp)
                f = cached_flags(w.cache, cp)
                if not (f & change) and f >> 16 == 0:
                    break
                k += ln
            normalize_segment(p + boundary, k - boundary, form, w)
        changed = replace_span(p, n, boundary, k, w.tmp, out, &copied, changed)
        i = k
        last_ccc = 0
    if changed:
        out.append(<const char*>p + copied, n - copied)
    return changed
