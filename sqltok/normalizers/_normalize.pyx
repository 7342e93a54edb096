# cython: language_level=3
"""`normalize_arrow` (NFC, NFD, NFKC, NFKD) and `bert_normalize_arrow` over Arrow string arrays.

Rows are split over threads with the GIL released (parallel_rows). Output is lazy at every level: a row nothing changes
is not copied while normalizing, an array nothing changes is returned as it came, and otherwise the
result is a string_view array whose unchanged rows point into the input's buffer (never copied) and
whose changed rows sit in one new buffer.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from libcpp.string cimport string
from libcpp.vector cimport vector

import pyarrow as pa

from sqltok.native.arrow_buffers cimport BinaryView, view_end, view_start, view_valid
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.normalizers.bert_normalize cimport BertOptions, bert_normalize_text, bert_options
from sqltok.normalizers.unicode_normalize cimport (FORM_NFC, FORM_NFD, FORM_NFKC, FORM_NFKD, NF_UNICODE_VERSION, NfWork,
                                normalize_text, page_cache_init)

UNICODE_VERSION = NF_UNICODE_VERSION.decode()
FORMS = {"NFC": FORM_NFC, "NFD": FORM_NFD, "NFKC": FORM_NFKC, "NFKD": FORM_NFKD}


cdef struct Part:
    string data                 # the changed rows' texts, back to back
    vector[int64_t] ends        # per row: its end in `data`, or -1 when the input row stands


cdef struct NormalizeCall:      # what the threads of one call share
    int form
    const BertOptions* bert     # BERT's normalizer, or NULL: normal form `form`
    Part* parts


cdef int64_t _normalize_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                             int64_t last) noexcept nogil:
    """Normalize rows [first, last) into part `part` (nothing fails: -1)."""
    cdef NormalizeCall* call = <NormalizeCall*>task
    cdef Part* out = &call.parts[part]
    cdef NfWork w
    cdef int64_t r, s
    cdef bint changed
    page_cache_init(w.cache)
    for r in range(first, last):
        if not view_valid(run.view, r):
            out.ends.push_back(-1)
            continue
        s = view_start(run.view, r)
        if call.bert != NULL:
            changed = bert_normalize_text(run.view.values + s, view_end(run.view, r) - s, call.bert[0], out.data, w)
        else:
            changed = normalize_text(run.view.values + s, view_end(run.view, r) - s, call.form, out.data, w)
        out.ends.push_back(<int64_t>out.data.size() if changed else -1)
    return -1


cdef object _apply(object texts, int form, const BertOptions* bert, int threads):
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    cdef vector[Part] parts = vector[Part](run.parts)
    cdef NormalizeCall call
    call.form = form
    call.bert = bert
    call.parts = parts.data()
    rows_run(run, _normalize_rows, NULL, &call)
    return _assemble(keep[0], keep[2], run.view, parts)


cdef object _assemble(object arr, object input_values, const BinaryView& v, vector[Part]& parts):
    """The input array when no row changed, else a string_view array: unchanged rows point into the
    input's values buffer (never copied), changed rows into one buffer holding the results."""
    cdef int64_t total = 0, r = 0, e, prev, base, ln, at = 0, n = v.length
    cdef int32_t buf, off
    cdef const uint8_t* src
    cdef size_t k, j
    cdef bint changed = False
    for k in range(parts.size()):
        total += <int64_t>parts[k].data.size()
        for j in range(parts[k].ends.size()):
            changed = changed or parts[k].ends[j] >= 0
    if not changed:
        return arr
    if total > INT32_MAX:
        raise ValueError("more than 2 GB of changed text in one array: normalize it in slices")
    data = PyBytes_FromStringAndSize(NULL, total)
    cdef char* d = PyBytes_AS_STRING(data)
    views = PyBytes_FromStringAndSize(NULL, n * 16)
    cdef char* w = PyBytes_AS_STRING(views)
    memset(w, 0, n * 16)
    for k in range(parts.size()):
        memcpy(d + at, parts[k].data.data(), parts[k].data.size())
        base = at
        at += <int64_t>parts[k].data.size()
        prev = 0
        for j in range(parts[k].ends.size()):
            e = parts[k].ends[j]
            if e >= 0:
                src, ln, buf, off = <const uint8_t*>d + base + prev, e - prev, 1, <int32_t>(base + prev)
                prev = e
            elif view_valid(v, r):
                ln = view_end(v, r) - view_start(v, r)
                if view_end(v, r) > INT32_MAX:
                    raise ValueError("more than 2 GB of text in one array: normalize it in slices")
                src, buf, off = v.values + view_start(v, r), 0, <int32_t>view_start(v, r)
            else:
                ln = 0
            (<int32_t*>(w + 16 * r))[0] = <int32_t>ln
            if ln <= 12:
                memcpy(w + 16 * r + 4, src, ln)
            else:
                memcpy(w + 16 * r + 4, src, 4)
                (<int32_t*>(w + 16 * r + 8))[0] = buf
                (<int32_t*>(w + 16 * r + 12))[0] = off
            r += 1
    validity = arr.is_valid().buffers()[1] if arr.null_count else None
    return pa.Array.from_buffers(pa.string_view(), n, [validity, pa.py_buffer(views),
                                                       input_values or pa.py_buffer(b""), pa.py_buffer(data)],
                                 null_count=arr.null_count)


def normalize_arrow(texts, str form, int threads=1):
    """The Unicode normal form `form` ('NFC', 'NFD', 'NFKC', 'NFKD') of each string of a pyarrow
    string array (NULL stays NULL): the input array itself when it is already normalized, else a
    string_view array."""
    if form not in FORMS:
        raise ValueError(f"unknown normalization form {form!r}: expected one of NFC, NFD, NFKC, NFKD")
    return _apply(texts, FORMS[form], NULL, threads)


def bert_normalize_arrow(texts, bint clean_text=True, bint handle_chinese_chars=True,
                         bint strip_accents=True, bint lowercase=True, int threads=1):
    """HF `BertNormalizer` of each string of a pyarrow string array (NULL stays NULL): the input
    array itself when nothing changes, else a string_view array. `strip_accents` is explicit here (HF's None means lowercase)."""
    cdef BertOptions o = bert_options(clean_text, handle_chinese_chars, strip_accents, lowercase)
    return _apply(texts, 0, &o, threads)
