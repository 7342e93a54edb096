# cython: language_level=3
"""MinHash signatures of word n-gram shingles over Arrow string arrays, rows split over threads with
the GIL released.

Words are the runs between White_Space code points (sqltok's Unicode tables); a shingle is `ngram`
consecutive words joined by one space (a document of fewer words is one shingle of all of them), hashed
by FNV-1a 64 folded to 32 bits. Each hash is mixed once by the MurmurHash3 finalizer, then permutation k
maps it to a_k h + b_k mod 2^32 (a_k odd: a bijection): datasketch's MinHash arithmetic in its
default "affine32" scheme, so that datasketch given the same shingle hashes and permutations computes
the same signature.
"""
from cython.parallel cimport prange
from libc.stdint cimport UINT32_MAX, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

import numpy as np

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, row_split, row_threads, view_end, view_start, view_valid
from sqltok.pretokenizer.matcher cimport UC_WS, uc_entry

cdef extern from *:
    """
    static const uint64_t SQLTOK_FNV_OFFSET = 14695981039346656037ULL;
    static const uint64_t SQLTOK_FNV_PRIME = 1099511628211ULL;
    """
    const uint64_t FNV_OFFSET "SQLTOK_FNV_OFFSET"
    const uint64_t FNV_PRIME "SQLTOK_FNV_PRIME"


cdef inline int _space_length(const uint8_t* s, int64_t i, int64_t n) noexcept nogil:
    """The byte length of the White_Space code point at s[i], or 0 when there is none there."""
    cdef uint8_t b = s[i]
    cdef uint32_t cp
    if b < 0x80:
        return 1 if uc_entry(b) & UC_WS else 0
    if b >= 0xE0 and b < 0xF0 and i + 2 < n:
        cp = ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
        return 3 if uc_entry(cp) & UC_WS else 0
    if b >= 0xC2 and b < 0xE0 and i + 1 < n:
        cp = ((b & 0x1F) << 6) | (s[i + 1] & 0x3F)
        return 2 if uc_entry(cp) & UC_WS else 0
    return 0


cdef inline uint64_t _fnv(uint64_t h, const uint8_t* s, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        h = (h ^ s[i]) * FNV_PRIME
    return h


cdef inline uint32_t _fmix32(uint32_t h) noexcept nogil:
    """The MurmurHash3 finalizer: a bijection of 32-bit values that spreads every input bit."""
    h ^= h >> 16
    h *= 0x85EBCA6BU
    h ^= h >> 13
    h *= 0xC2B2AE35U
    return h ^ (h >> 16)


cdef void _words(const uint8_t* s, int64_t n, vector[int64_t]& bounds) noexcept nogil:
    """Start and end of every word, flat."""
    cdef int64_t i = 0
    cdef int w
    cdef bint inside = False
    bounds.clear()
    while i < n:
        w = _space_length(s, i, n)
        if w:
            if inside:
                bounds.push_back(i)
                inside = False
            i += w
        else:
            if not inside:
                bounds.push_back(i)
                inside = True
            i += 1
    if inside:
        bounds.push_back(n)


cdef void _sign_rows(const BinaryView& v, int64_t first, int64_t last, int ngram, const uint32_t* a,
                     const uint32_t* b, int perms, uint32_t* out) noexcept nogil:
    cdef vector[int64_t] bounds
    cdef int64_t r, j, words, shingles, k
    cdef const uint8_t* s
    cdef uint64_t h
    cdef uint32_t p, m
    cdef uint32_t* sig
    cdef int i, width
    for r in range(first, last):
        sig = out + r * perms
        for i in range(perms):
            sig[i] = UINT32_MAX
        if not view_valid(v, r):
            continue
        s = v.values + view_start(v, r)
        _words(s, view_end(v, r) - view_start(v, r), bounds)
        words = <int64_t>bounds.size() // 2
        if words == 0:
            continue
        width = ngram if words >= ngram else <int>words
        shingles = words - width + 1
        for j in range(shingles):
            h = FNV_OFFSET
            for k in range(j, j + width):
                if k > j:
                    h = (h ^ 0x20) * FNV_PRIME
                h = _fnv(h, s + bounds[2 * k], bounds[2 * k + 1] - bounds[2 * k])
            m = _fmix32(<uint32_t>(h ^ (h >> 32)))
            for i in range(perms):
                p = a[i] * m + b[i]
                if p < sig[i]:
                    sig[i] = p


def minhash_arrow(texts, a, b, int ngram=5, int threads=1):
    """A rows x permutations uint32 matrix of MinHash values; a row without words (or NULL) is all
    0xFFFFFFFF. `a` (odd) and `b` are the permutations' uint32 coefficients."""
    if ngram < 1:
        raise ValueError(f"shingles need at least one word, not {ngram}")
    cdef const uint32_t[::1] ca = a
    cdef const uint32_t[::1] cb = b
    if ca.shape[0] != cb.shape[0] or ca.shape[0] == 0:
        raise ValueError("a and b must be non-empty and of one length")
    cdef list keep = []
    cdef BinaryView v = binary_view(texts, keep)
    cdef int perms = ca.shape[0]
    out = np.empty((v.length, perms), np.uint32)
    cdef uint32_t[:, ::1] o = out
    cdef int nt = row_threads(threads, v.length), k
    if v.length:
        for k in prange(nt, nogil=True, num_threads=nt, schedule="static"):
            _sign_rows(v, row_split(v, k, nt), row_split(v, k + 1, nt), ngram, &ca[0], &cb[0], perms, &o[0, 0])
    return out


def shingle_hashes(str text, int ngram=5):
    """The shingle hashes of one text, in order (for tests and oracles)."""
    data = text.encode()
    cdef const uint8_t* s = data
    cdef vector[int64_t] bounds
    _words(s, len(data), bounds)
    cdef int64_t words = <int64_t>bounds.size() // 2, j, k
    cdef int width = ngram if words >= ngram else <int>words
    cdef uint64_t h
    result = []
    for j in range(words - width + 1 if words else 0):
        h = FNV_OFFSET
        for k in range(j, j + width):
            if k > j:
                h = (h ^ 0x20) * FNV_PRIME
            h = _fnv(h, s + bounds[2 * k], bounds[2 * k + 1] - bounds[2 * k])
        result.append(<uint32_t>(h ^ (h >> 32)))
    return result
