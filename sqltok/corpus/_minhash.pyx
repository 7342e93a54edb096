# cython: language_level=3
"""Word shingles, their MinHash signatures and whole-text fingerprints over Arrow string arrays, rows
split over threads with the GIL released.

Words are the runs between White_Space code points (sqltok's Unicode tables), each hashed once by
FNV-1a 64 over its bytes. A shingle is `ngram` consecutive words (a document of fewer words is one
shingle of all of them); its hash folds the word hashes in order, h = (h ^ w) * FNV_PRIME from
FNV_OFFSET, to 32 bits (high ^ low). Each shingle hash is mixed once by the MurmurHash3 finalizer, then
permutation k maps it to a_k h + b_k mod 2^32 (a_k odd: a bijection): datasketch's MinHash arithmetic
in its default "affine32" scheme, so that datasketch given the same shingle hashes and permutations
computes the same signature. A text's fingerprint folds all its word hashes the same way (64 bits):
texts equal up to runs of whitespace have equal fingerprints.
"""
from libc.stdint cimport UINT32_MAX, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

import numpy as np

from sqltok.native.arrow_buffers cimport BinaryView, view_end, view_start, view_valid
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.pretokenizer.matcher cimport UC_WS, uc_entry

cdef extern from *:
    """
    static const uint64_t SQLTOK_FNV_OFFSET = 14695981039346656037ULL;
    static const uint64_t SQLTOK_FNV_PRIME = 1099511628211ULL;
    /* sig[i] = min(sig[i], a[i] * h + b[i]) for every permutation: restrict lets the compiler vectorize */
    static inline void sqltok_minhash_update(uint32_t* __restrict sig, const uint32_t* __restrict a,
                                             const uint32_t* __restrict b, uint32_t h, int n) {
        for (int i = 0; i < n; i++) {
            uint32_t p = a[i] * h + b[i];
            sig[i] = p < sig[i] ? p : sig[i];
        }
    }
    """
    const uint64_t FNV_OFFSET "SQLTOK_FNV_OFFSET"
    const uint64_t FNV_PRIME "SQLTOK_FNV_PRIME"
    void minhash_update "sqltok_minhash_update"(uint32_t* sig, const uint32_t* a, const uint32_t* b, uint32_t h,
                                                int n) nogil


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


cdef inline uint32_t _fmix32(uint32_t h) noexcept nogil:
    """The MurmurHash3 finalizer: a bijection of 32-bit values that spreads every input bit."""
    h ^= h >> 16
    h *= 0x85EBCA6BU
    h ^= h >> 13
    h *= 0xC2B2AE35U
    return h ^ (h >> 16)


cdef void _word_hashes(const uint8_t* s, int64_t n, vector[uint64_t]& words) noexcept nogil:
    """The FNV-1a 64 hash of every word, in order."""
    cdef int64_t i = 0
    cdef int w
    cdef bint inside = False
    cdef uint64_t h = FNV_OFFSET
    words.clear()
    while i < n:
        w = _space_length(s, i, n)
        if w:
            if inside:
                words.push_back(h)
                inside = False
            i += w
        else:
            if not inside:
                h = FNV_OFFSET
                inside = True
            h = (h ^ s[i]) * FNV_PRIME
            i += 1
    if inside:
        words.push_back(h)


cdef inline uint64_t _fold(const uint64_t* words, int64_t n) noexcept nogil:
    cdef uint64_t h = FNV_OFFSET
    cdef int64_t k
    for k in range(n):
        h = (h ^ words[k]) * FNV_PRIME
    return h


cdef inline uint32_t _shingle(const uint64_t* words, int width) noexcept nogil:
    cdef uint64_t h = _fold(words, width)
    return <uint32_t>(h ^ (h >> 32))


cdef void _sign_rows(const BinaryView& v, int64_t first, int64_t last, int ngram, const uint32_t* a,
                     const uint32_t* b, int perms, uint32_t* out) noexcept nogil:
    cdef vector[uint64_t] words
    cdef int64_t r, j, n
    cdef uint32_t* sig
    cdef int i, width
    for r in range(first, last):
        sig = out + r * perms
        for i in range(perms):
            sig[i] = UINT32_MAX
        if not view_valid(v, r):
            continue
        _word_hashes(v.values + view_start(v, r), view_end(v, r) - view_start(v, r), words)
        n = <int64_t>words.size()
        if n == 0:
            continue
        width = ngram if n >= ngram else <int>n
        for j in range(n - width + 1):
            minhash_update(sig, a, b, _fmix32(_shingle(words.data() + j, width)), perms)


cdef void _fingerprint_rows(const BinaryView& v, int64_t first, int64_t last, uint64_t* out) noexcept nogil:
    cdef vector[uint64_t] words
    cdef int64_t r
    for r in range(first, last):
        if view_valid(v, r):
            _word_hashes(v.values + view_start(v, r), view_end(v, r) - view_start(v, r), words)
            out[r] = _fold(words.data(), <int64_t>words.size())
        else:
            out[r] = 0


cdef struct SignTask:
    int ngram
    const uint32_t* a
    const uint32_t* b
    int perms
    uint32_t* out


cdef int64_t _sign_work(void* task, const RowRun& run, int thread, int part, int64_t first,
                        int64_t last) noexcept nogil:
    cdef SignTask* t = <SignTask*>task
    _sign_rows(run.view, first, last, t.ngram, t.a, t.b, t.perms, t.out)
    return -1


cdef int64_t _fingerprint_work(void* task, const RowRun& run, int thread, int part, int64_t first,
                               int64_t last) noexcept nogil:
    _fingerprint_rows(run.view, first, last, <uint64_t*>task)
    return -1


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
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    cdef int perms = ca.shape[0]
    out = np.empty((run.view.length, perms), np.uint32)
    cdef uint32_t[:, ::1] o = out
    cdef SignTask task
    if run.view.length:
        task.ngram, task.a, task.b, task.perms, task.out = ngram, &ca[0], &cb[0], perms, &o[0, 0]
        rows_run(run, _sign_work, NULL, &task)
    return out


def fingerprint_arrow(texts, int threads=1):
    """A uint64 fingerprint of each text's words in order (0 for NULL)."""
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    out = np.empty(run.view.length, np.uint64)
    cdef uint64_t[::1] o = out
    if run.view.length:
        rows_run(run, _fingerprint_work, NULL, &o[0])
    return out


def shingle_hashes(str text, int ngram=5):
    """The shingle hashes of one text, in order, before the finalizer (for tests and oracles)."""
    data = text.encode()
    cdef vector[uint64_t] words
    _word_hashes(data, len(data), words)
    cdef int64_t n = <int64_t>words.size(), j
    cdef int width = ngram if n >= ngram else <int>n
    return [_shingle(words.data() + j, width) for j in range(n - width + 1 if n else 0)]
