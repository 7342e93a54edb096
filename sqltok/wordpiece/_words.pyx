# cython: language_level=3
"""The words WordPiece training counts: each row through HF's `BertNormalizer` (sqltok's BERT
normalizer, the WordPiece encoder's) and `BertPreTokenizer` (whitespace splits, each punctuation
character is a word of its own), as a list<string> per row. One pass per row, the GIL released;
the lists are built from C buffers.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector

import pyarrow as pa

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from sqltok.normalizers.bert_normalize cimport BertOptions, bert_normalize_text, bert_options
from sqltok.normalizers.unicode_normalize cimport NfWork, cached_flags, page_cache_init, utf8_decode


cdef extern from "normalization_tables.h" nogil:
    enum:
        BERT_SPLIT
        BERT_PUNCT


cdef void _split(const uint8_t* q, int64_t m, NfWork& w, string& values, vector[int32_t]& offsets) noexcept nogil:
    """Append the BERT pre-tokenizer's words of normalized text q[:m]."""
    cdef int64_t i = 0, start = -1
    cdef int ln
    cdef uint32_t cp, f
    while i < m:
        ln = utf8_decode(q + i, m - i, &cp)
        f = cached_flags(w.cache, cp)
        if f & (BERT_SPLIT | BERT_PUNCT):
            if start >= 0:
                values.append(<const char*>q + start, i - start)
                offsets.push_back(<int32_t>values.size())
                start = -1
            if f & BERT_PUNCT:
                values.append(<const char*>q + i, ln)
                offsets.push_back(<int32_t>values.size())
        elif start < 0:
            start = i
        i += ln
    if start >= 0:
        values.append(<const char*>q + start, m - start)
        offsets.push_back(<int32_t>values.size())


def bert_words_arrow(texts, bint clean_text, bint handle_chinese_chars, bint strip_accents,
                     bint lowercase) -> pa.ListArray:
    """The BERT words of every row of a string array (NULL stays NULL), normalized with the given
    switches (strip_accents already resolved: `sqltok.normalizers.bert.bert_switches`)."""
    cdef list keep = []
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    cdef BinaryView v = binary_view(texts, keep)
    cdef BertOptions o = bert_options(clean_text, handle_chinese_chars, strip_accents, lowercase)
    cdef NfWork w
    cdef string norm, values
    cdef vector[int32_t] offsets, lists
    cdef int64_t i, start, n
    cdef const uint8_t* p
    page_cache_init(w.cache)
    offsets.push_back(0)
    with nogil:
        for i in range(v.length):
            lists.push_back(<int32_t>(offsets.size() - 1))
            if not view_valid(v, i):
                continue
            start = view_start(v, i)
            n = view_end(v, i) - start
            p = v.values + start
            norm.clear()
            if bert_normalize_text(p, n, o, norm, w):
                _split(<const uint8_t*>norm.data(), <int64_t>norm.size(), w, values, offsets)
            else:
                _split(p, n, w, values, offsets)
            if values.size() > 0x7FFFFFFF:
                break
        lists.push_back(<int32_t>(offsets.size() - 1))
    if values.size() > 0x7FFFFFFF:
        raise ValueError("bert_words_arrow: more than 2 GiB of words in one array")
    value_array = pa.Array.from_buffers(pa.string(), offsets.size() - 1, [
        None, pa.py_buffer(PyBytes_FromStringAndSize(<const char*>offsets.data(), offsets.size() * 4)),
        pa.py_buffer(PyBytes_FromStringAndSize(values.data(), values.size()))])
    validity = pa.compute.is_valid(texts).buffers()[1] if texts.null_count else None
    return pa.Array.from_buffers(pa.list_(pa.string()), v.length, [
        validity, pa.py_buffer(PyBytes_FromStringAndSize(<const char*>lists.data(), lists.size() * 4))],
        null_count=texts.null_count, children=[value_array])
