# cython: language_level=3
"""`normalize_arrow` (NFC, NFD, NFKC, NFKD) and `bert_normalize_arrow` over Arrow string arrays.

Rows are split over threads with the GIL released. Output is lazy at every level: a row nothing changes
is not copied while normalizing, and an array nothing changes is returned as it came; otherwise the
result is one values buffer, filled by bulk copies of unchanged runs of rows and the changed rows.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cython.parallel cimport prange
from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

import pyarrow as pa

from arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from bert_normalize cimport BertOptions, bert_normalize_text, bert_options
from unicode_normalize cimport (FORM_NFC, FORM_NFD, FORM_NFKC, FORM_NFKD, NF_UNICODE_VERSION, NfWork,
                                normalize_text, page_cache_init)

UNICODE_VERSION = NF_UNICODE_VERSION.decode()
FORMS = {"NFC": FORM_NFC, "NFD": FORM_NFD, "NFKC": FORM_NFKC, "NFKD": FORM_NFKD}


cdef struct Part:
    string data                 # the changed rows' texts, back to back
    vector[int64_t] ends        # per row: its end in `data`, or -1 when the input row stands


cdef void _run(const BinaryView& v, int64_t first, int64_t last, int form, const BertOptions* bert,
               Part& part) noexcept nogil:
    """Normalize rows [first, last): with `bert`, BERT's normalizer, else normal form `form`."""
    cdef NfWork w
    cdef int64_t r, s
    cdef bint changed
    page_cache_init(w.cache)
    for r in range(first, last):
        if not view_valid(v, r):
            part.ends.push_back(-1)
            continue
        s = view_start(v, r)
        if bert != NULL:
            changed = bert_normalize_text(v.values + s, view_end(v, r) - s, bert[0], part.data, w)
        else:
            changed = normalize_text(v.values + s, view_end(v, r) - s, form, part.data, w)
        part.ends.push_back(<int64_t>part.data.size() if changed else -1)


cdef object _apply(object texts, int form, const BertOptions* bert, int threads):
    cdef list keep = []
    cdef BinaryView v = binary_view(texts, keep)
    cdef int64_t n = v.length
    cdef int nt = max(1, min(threads, n // 64 + 1))
    cdef vector[Part] parts = vector[Part](nt)
    cdef int k
    for k in prange(nt, nogil=True, num_threads=nt, schedule="static"):
        _run(v, n * k // nt, n * (k + 1) // nt, form, bert, parts[k])
    return _assemble(keep[0], v, parts)


cdef object _assemble(object arr, const BinaryView& v, vector[Part]& parts):
    """The input array when no row changed, else a large_string array of the results."""
    cdef int64_t total = 0, r = 0, s, e, prev, run_start = -1, at = 0
    cdef size_t k, j
    cdef bint any_change = False
    for k in range(parts.size()):
        prev = 0
        for j in range(parts[k].ends.size()):
            e = parts[k].ends[j]
            if e >= 0:
                any_change = True
                total += e - prev
                prev = e
            elif view_valid(v, r):
                total += view_end(v, r) - view_start(v, r)
            r += 1
    if not any_change:
        return arr
    offsets = PyBytes_FromStringAndSize(NULL, (v.length + 1) * sizeof(int64_t))
    values = PyBytes_FromStringAndSize(NULL, total)
    cdef int64_t* off = <int64_t*>PyBytes_AS_STRING(offsets)
    cdef char* out = PyBytes_AS_STRING(values)
    off[0] = 0
    r = 0
    for k in range(parts.size()):
        prev = 0
        for j in range(parts[k].ends.size()):
            e = parts[k].ends[j]
            if e >= 0 or not view_valid(v, r):
                if run_start >= 0:      # one copy for a run of unchanged rows
                    s = view_start(v, run_start)
                    memcpy(out + at, v.values + s, view_start(v, r) - s)
                    at += view_start(v, r) - s
                    run_start = -1
                if e >= 0:
                    memcpy(out + at, parts[k].data.data() + prev, e - prev)
                    at += e - prev
                    off[r + 1] = off[r] + e - prev
                    prev = e
                else:
                    off[r + 1] = off[r]
            else:
                if run_start < 0:
                    run_start = r
                off[r + 1] = off[r] + view_end(v, r) - view_start(v, r)
            r += 1
    if run_start >= 0:
        s = view_start(v, run_start)
        memcpy(out + at, v.values + s, view_end(v, r - 1) - s)
    validity = arr.is_valid().buffers()[1] if arr.null_count else None
    return pa.Array.from_buffers(pa.large_string(), v.length,
                                 [validity, pa.py_buffer(offsets), pa.py_buffer(values)],
                                 null_count=arr.null_count)


def normalize_arrow(texts, str form, int threads=1):
    """The Unicode normal form `form` ('NFC', 'NFD', 'NFKC', 'NFKD') of each string of a pyarrow
    string array (NULL stays NULL); the input array itself when it is already normalized."""
    if form not in FORMS:
        raise ValueError(f"unknown normalization form {form!r}: expected one of NFC, NFD, NFKC, NFKD")
    return _apply(texts, FORMS[form], NULL, threads)


def bert_normalize_arrow(texts, bint clean_text=True, bint handle_chinese_chars=True,
                         bint strip_accents=True, bint lowercase=True, int threads=1):
    """HF `BertNormalizer` of each string of a pyarrow string array (NULL stays NULL); the input
    array itself when nothing changes. `strip_accents` is explicit here (HF's None means lowercase)."""
    cdef BertOptions o = bert_options(clean_text, handle_chinese_chars, strip_accents, lowercase)
    return _apply(texts, 0, &o, threads)
