# cython: language_level=3
"""Words and split words of each document for a WordPiece tokenizer, read off the document's own
ids instead of encoding each word alone (what the judge's fertility and split-word share need).

A word (a `str.split` word) encoded alone gives the tokens of the BERT pre-tokens in it, and in the
whole document those same tokens follow one another: each pre-token is one word-initial token and
the continuation tokens after it. So a word takes as many pre-tokens from the document's ids as it
holds: an ASCII word counted from its bytes (each punctuation character alone, each run of the
other characters, bytes the normalizer drops taking no part); a word with other characters as the
ids of it encoded alone give (the caller encodes these few, `foreign_words`). Where a `str.split`
space is no BERT space (the normalizer drops \\x0b \\x0c \\x1c-\\x1f \\x85) two words can share a
pre-token: then the document holds fewer pre-tokens than its words and the walk runs out, and the
row is left to the caller (`redo`), as is any other row whose ids do not line up. GIL released.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

import numpy as np
import pyarrow as pa

from sqltok.native.arrow_buffers cimport (BinaryView, binary_view, buffer_address, int64_array, view_end, view_start,
                                          view_valid)
from sqltok.normalizers.bert_normalize cimport BertOptions, bert_options
from sqltok.normalizers.unicode_normalize cimport PageCache, cached_flags, page_cache_init
from sqltok.pretokenizer.str_split cimport next_word


cdef extern from "normalization_tables.h" nogil:
    enum:
        BERT_SPLIT
        BERT_PUNCT


cdef enum:
    RUN = 0         # joins the run of letters, digits and the like: one pre-token per run
    PUNCT = 1       # a pre-token alone
    DROP = 2        # dropped by the normalizer
    BREAK = 3       # BERT whitespace: ends a run
    HIGH = 4        # a byte of a non-ASCII character


cdef struct Walk:   # one row's ids, and the next one to take
    const int32_t* ids
    int64_t k
    int64_t end


cdef inline bint take(Walk& w, int64_t pretokens, const uint8_t* continuation) noexcept nogil:
    """Take `pretokens` pre-tokens' ids (one word-initial id and the continuations after it each);
    False when the ids run out or one does not start with a word-initial id."""
    cdef int64_t p
    for p in range(pretokens):
        if w.k >= w.end or continuation[w.ids[w.k]]:
            return False
        w.k += 1
        while w.k < w.end and continuation[w.ids[w.k]]:
            w.k += 1
    return True


cdef class WordPieceWordSplits:
    """A WordPiece tokenizer's byte classes and continuation ids, built once per tokenizer."""
    cdef uint8_t cls[128]
    cdef vector[uint8_t] continuation
    cdef int64_t before, after

    def __init__(self, normalizer, bytes prefix, list tokens, int64_t before, int64_t after):
        """`normalizer`: None or BERT's (clean_text, handle_chinese_chars, strip_accents, lowercase);
        `prefix`: the continuation prefix; `tokens`: every id's token (bytes); `before`/`after`: how
        many ids the post-processor puts around a sequence. An id is a continuation when its token
        is the prefix and more (with a prefix of punctuation, as "##", no word-initial token is;
        with another, a word-initial token taken for one leaves the walk short and the row redone)."""
        cdef PageCache c
        cdef BertOptions o
        cdef int b, m
        cdef uint32_t f
        cdef bytes t
        page_cache_init(c)
        if normalizer is not None:
            o = bert_options(normalizer[0], normalizer[1], normalizer[2], normalizer[3])
        for b in range(128):
            m = o.ascii[b] if normalizer is not None else b
            f = cached_flags(c, m) if m >= 0 else 0
            self.cls[b] = DROP if m < 0 else BREAK if f & BERT_SPLIT else PUNCT if f & BERT_PUNCT else RUN
        self.continuation.resize(len(tokens))
        for b, t in enumerate(tokens):
            self.continuation[b] = t.startswith(prefix) and len(t) > len(prefix)
        self.before, self.after = before, after

    cdef inline int64_t ascii_pretokens(self, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        """BERT pre-tokens of s[:n], a word; -1 when it holds a non-ASCII byte."""
        cdef int64_t count = 0
        cdef bint in_run = False
        cdef Py_ssize_t i
        cdef uint8_t c
        for i in range(n):
            if s[i] >= 0x80:
                return -1
            c = self.cls[s[i]]
            if c == RUN:
                count += not in_run
                in_run = True
            elif c != DROP:
                count += c == PUNCT
                in_run = False
        return count

    def foreign_words(self, texts: "pa.Array") -> "tuple[pa.Array, pa.Array]":
        """(every word with a non-ASCII byte, row by row (large_string), where each row's end in it
        (int64)): the words to encode alone for `splits`."""
        cdef list keep = []
        cdef BinaryView v = binary_view(texts, keep)
        cdef vector[int64_t] offsets, row_ends
        cdef vector[unsigned char] values
        cdef int64_t r, a
        cdef Py_ssize_t n, i, start
        cdef const unsigned char* s
        offsets.push_back(0)
        with nogil:
            for r in range(v.length):
                if view_valid(v, r):
                    a = view_start(v, r)
                    s = v.values + a
                    n = view_end(v, r) - a
                    i = 0
                    while next_word(s, n, &i, &start):
                        if self.ascii_pretokens(s + start, i - start) < 0:
                            values.insert(values.end(), s + start, s + i)
                            offsets.push_back(<int64_t>values.size())
                row_ends.push_back(<int64_t>offsets.size() - 1)
        data = PyBytes_FromStringAndSize(<const char*>values.data(), values.size())
        words = pa.Array.from_buffers(pa.large_string(), offsets.size() - 1,
                                      [None, int64_array(offsets).buffers()[1], pa.py_buffer(data)])
        return words, int64_array(row_ends)

    def splits(self, texts: "pa.Array", ids: "pa.LargeListArray", foreign_ids: "pa.LargeListArray",
               row_ends: "pa.Array") -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
        """(words, split words, redo) of every row (int64, int64, bool; 0, 0, False for NULL): `ids`
        the rows' large_list<int32> ids, `foreign_ids` those of `foreign_words`' words each encoded
        alone, `row_ends` its second result. A row marked `redo` has its words right and its split
        words 0: its ids do not line up with its words (see the module)."""
        cdef list keep = []
        cdef BinaryView v = binary_view(texts, keep)
        if len(ids) != v.length or len(row_ends) != v.length:
            raise ValueError("one row of ids and one row end per text")
        id_values, foreign_values = ids.values, foreign_ids.values
        cdef const int64_t* offsets = (<const int64_t*>buffer_address(ids.buffers()[1])) + <int64_t>ids.offset
        cdef const int32_t* values = (<const int32_t*>buffer_address(id_values.buffers()[1])) + <int64_t>id_values.offset
        cdef const int64_t* f_offsets = ((<const int64_t*>buffer_address(foreign_ids.buffers()[1]))
                                         + <int64_t>foreign_ids.offset)
        cdef const int32_t* f_values = ((<const int32_t*>buffer_address(foreign_values.buffers()[1]))
                                        + <int64_t>foreign_values.offset)
        cdef const int64_t* ends = (<const int64_t*>buffer_address(row_ends.buffers()[1])) + <int64_t>row_ends.offset
        cdef const uint8_t* continuation = self.continuation.data()
        words_np = np.zeros(v.length, np.int64)
        split_np = np.zeros(v.length, np.int64)
        redo_np = np.zeros(v.length, np.bool_)
        cdef int64_t[::1] words = words_np, split = split_np
        cdef uint8_t[::1] redo = redo_np.view(np.uint8)
        cdef int64_t r, a, j = 0, pretokens, tokens, first, k
        cdef Py_ssize_t n, i, start
        cdef const unsigned char* s
        cdef Walk w
        cdef bint lined_up
        with nogil:
            for r in range(v.length):
                if not view_valid(v, r):
                    j = ends[r]
                    continue
                a = view_start(v, r)
                s = v.values + a
                n = view_end(v, r) - a
                w.ids = values
                w.k = offsets[r] + self.before
                w.end = offsets[r + 1] - self.after
                lined_up = w.k <= w.end
                i = 0
                while next_word(s, n, &i, &start):
                    words[r] += 1
                    if not lined_up:
                        continue
                    first = w.k
                    pretokens = self.ascii_pretokens(s + start, i - start)
                    if pretokens >= 0:
                        lined_up = take(w, pretokens, continuation)
                        tokens = w.k - first
                    else:  # the word encoded alone: its tokens and pre-tokens (word-initial ids)
                        tokens = f_offsets[j + 1] - f_offsets[j] - self.before - self.after
                        pretokens = 0
                        for k in range(f_offsets[j] + self.before, f_offsets[j + 1] - self.after):
                            pretokens += not continuation[f_values[k]]
                        j += 1
                        lined_up = take(w, pretokens, continuation) and w.k - first == tokens
                    split[r] += tokens >= 2
                if not lined_up or w.k != w.end:
                    redo[r] = True
                    split[r] = 0
                j = ends[r]
        return words_np, split_np, redo_np
