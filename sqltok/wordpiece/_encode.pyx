# cython: language_level=3
"""BERT's pipeline over Arrow string arrays: `BertNormalizer`, `BertPreTokenizer` (split on
whitespace, isolate punctuation), WordPiece (greedy longest match, continuation prefix,
`max_input_chars_per_word`, unknown token) and the post-processor's templates (one sequence, or a
pair of them).

Each thread reads a row once: ASCII words are lowercased 8 bytes at a time into a small buffer and
looked up whole in a hash table (most words are one token); the other words go through the BERT
normalizer first. A word that is not one token is split by one walk per piece down a byte trie
(word-initial tokens, and continuation tokens without their prefix). The GIL is released; ids go to
Arrow from C vectors without a copy. Single Python str take the direct path: their own UTF-8 buffer
in, a list of shared int objects out.
"""
from cpython.list cimport PyList_New
cimport cython
from cpython.exc cimport PyErr_Clear
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

import pyarrow as pa

from sqltok.errors import token_id_error

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_bytes, view_end, view_start, view_valid
from sqltok.normalizers.bert_normalize cimport BertOptions, bert_normalize_text, bert_options, block_capitals
from sqltok.wordpiece.byte_trie cimport ByteTrie, byte_trie_build, byte_trie_longest
from sqltok.native.bytes_table cimport (BytesTable, _mix64, bytes_hash, bytes_table_build, bytes_table_get_hashed,
                          bytes_table_get_head)
from sqltok.native.decode_arrow cimport TokenPieces, decode_arrow
from sqltok.native.id_lists cimport IdRows, IdVector, id_rows_move
from sqltok.native.decode_ids cimport decode_ids, decode_text
from sqltok.native.id_output cimport (IdPool, id_list_fill, id_pool_new, id_pool_release, id_pool_take,
                                      id_rows_arrow)
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.native.portable cimport ctz64
from sqltok.normalizers.unicode_normalize cimport NfWork, PageCache, cached_flags, page_cache_init, utf8_decode


cdef extern from "normalization_tables.h" nogil:
    enum:
        BERT_SPLIT
        BERT_PUNCT


cdef enum:
    WORD = 0
    SPLIT = 1
    PUNCT = 2
    OTHER = 3                   # a byte the fused pass leaves to the general path
    WORD_BUF = 64               # the fused pass folds ASCII words up to this long into a buffer
    SPECIALS_TEXT = 0           # `_encode_one`: special tokens' text is text,
    SPECIALS_MATCH = 1          # ... each is its token,
    SPECIALS_REFUSE = 2         # ... or the text is refused (None)
    NOGIL_BYTES = 4096          # a single str from Python this long or longer is encoded without the GIL
    SCRATCH_IDS = 1 << 20       # the scratch vector of single strs is kept up to this capacity (4 MiB)


cdef inline uint64_t block_in(uint64_t x, uint64_t lo, uint64_t hi) noexcept nogil:
    """0x80 in each byte of x that is ASCII and in lo..hi."""
    cdef uint64_t ones = 0x0101010101010101ULL
    cdef uint64_t v = x & ones * 127
    return (ones * (128 + hi) - v) & ~x & (v + ones * (128 - lo)) & ones * 0x80


cdef inline uint64_t block_alnum(uint64_t x) noexcept nogil:
    """0x80 in each byte of x that is an ASCII letter or digit."""
    return block_in(x, 0x30, 0x39) | block_in(x, 0x41, 0x5A) | block_in(x, 0x61, 0x7A)


cdef inline uint64_t word_hash(const uint64_t* words, uint64_t last, int64_t n) noexcept nogil:
    """`bytes_hash` of n bytes held as whole 8-byte `words` and `last`, the zero-padded rest (kept in
    a register: reading back bytes just stored one by one would stall)."""
    cdef int64_t j
    cdef uint64_t h = <uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL
    for j in range(n >> 3):
        h = _mix64(h ^ words[j])
    if n & 7:
        h = _mix64(h ^ last)
    return h if h != 0 else 1


cdef struct Workspace:
    NfWork w
    string norm


cdef inline void _extend(IdVector& out, const vector[int32_t]& ids) noexcept nogil:
    out.insert(out.end(), ids.begin(), ids.end())


@cython.final  # (no subclass: its methods are called directly, not through a table)
cdef class WordPieceEncoder:
    """A WordPiece vocabulary with BERT's normalizer and pre-tokenizer; build once, encode from any
    number of threads."""
    cdef string vocab                       # token bytes back to back
    cdef vector[int64_t] starts, ends
    cdef BytesTable initial                 # word-initial tokens, for whole words
    cdef ByteTrie trie                      # root 0: word-initial tokens, root 1: continuations
    cdef int32_t unk
    cdef int64_t max_chars
    cdef bint normalize
    cdef BertOptions options
    cdef vector[int32_t] before, after      # post-processor ids around a sequence
    cdef vector[int32_t] pair_before, pair_between, pair_after   # ... and around a pair
    cdef uint8_t ascii_class[128]
    cdef int32_t ascii_word[128]            # the id of each ASCII character as a whole word (-1: none)
    cdef uint8_t raw_class[128]             # class of each input byte after normalization (OTHER: removed)
    cdef bint fold_caps                     # the normalizer lowercases ASCII
    cdef string pieces                      # decode: each id's text first and after the first
    cdef vector[int64_t] piece_starts
    cdef vector[uint8_t] skip
    cdef IdPool* pool                       # ids memory handed back by Arrow, for the next call
    cdef list id_objects                    # int objects of every id, for Python lists (built once)
    cdef IdVector scratch                   # ids of one str (its memory kept for the next call)
    cdef Workspace gil_ws                   # the workspace of short strs, encoded with the GIL held (one at a time)
    cdef string specials                    # special tokens' text back to back, to find them in a str
    cdef vector[int64_t] special_starts     # special k is specials[special_starts[k]:special_starts[k + 1]]
    cdef vector[int32_t] special_ids        # ... and its id
    cdef uint8_t special_first[256]         # 1 for each byte a special token's text starts with
    cdef int special_byte                   # the one such byte, or -1 when there are several or none

    def __cinit__(self):
        self.pool = id_pool_new()
        page_cache_init(self.gil_ws.w.cache)

    def __dealloc__(self):
        id_pool_release(self.pool)

    def __init__(self, list tokens, bytes prefix, int32_t unk_id, int64_t max_input_chars_per_word,
                 normalizer, list single, list pair, list first_pieces, list later_pieces, skip_ids,
                 list special_tokens, int64_t n_model=-1):
        """`tokens`: token bytes by id; `normalizer`: None or (clean_text, handle_chinese_chars,
        strip_accents, lowercase); `single`: post-processor ids before and after a sequence, `pair`:
        before, between and after two; `first_pieces`/`later_pieces`: decoded text of each id at the
        start of a sequence / after it (bytes); `skip_ids`: ids that decoding leaves out when it skips
        special tokens (the special tokens); `special_tokens`: (text (bytes), id) of each, which `encode_str` can look for;
        `n_model`: how many of `tokens` are the model's (-1: all), the others (HF's added tokens) only
        decoded, never matched by WordPiece."""
        cdef vector[int32_t] initial_keys
        cdef list cont_keys = []
        cdef int32_t i
        cdef bytes t
        cdef PageCache c
        cdef int b
        cdef uint8_t byte
        cdef uint32_t f
        cdef int m
        page_cache_init(c)
        for b in range(128):
            f = cached_flags(c, b)
            self.ascii_class[b] = SPLIT if f & BERT_SPLIT else PUNCT if f & BERT_PUNCT else WORD
        # a token listed twice (a vocab.txt may) is matched as its last id, as HF's vocabulary map has it
        cdef dict last = {t: i for i, t in enumerate(tokens if n_model < 0 else tokens[:n_model])}
        for i, t in enumerate(tokens):
            self.starts.push_back(self.vocab.size())
            self.vocab.append(<const char*>t, len(t))
            self.ends.push_back(self.vocab.size())
            if 0 <= n_model <= i or last[t] != i:
                continue
            if self._reachable(<const uint8_t*>t, len(t), True, c):
                initial_keys.push_back(i)
            if t.startswith(prefix) and self._reachable(<const uint8_t*>t + len(prefix), len(t) - len(prefix), False, c):
                cont_keys.append((t[len(prefix):], i))
        bytes_table_build(&self.initial, <const uint8_t*>self.vocab.data(), self.starts.data(),
                          self.ends.data(), initial_keys)
        byte_trie_build(&self.trie, [[(tokens[i], i) for i in initial_keys], cont_keys])
        self.unk = unk_id
        self.max_chars = max_input_chars_per_word
        for b in range(128):
            byte = b
            self.ascii_word[b] = -1 if self.max_chars < 1 else bytes_table_get_hashed(
                &self.initial, <const uint8_t*>self.vocab.data(), self.starts.data(), self.ends.data(), &byte, 1,
                bytes_hash(&byte, 1))
        self.normalize = normalizer is not None
        if normalizer is not None:
            self.options = bert_options(normalizer[0], normalizer[1], normalizer[2], normalizer[3])
        for b in range(128):
            m = self.options.ascii[b] if self.normalize else b
            self.raw_class[b] = OTHER if m < 0 else self.ascii_class[m]
        self.fold_caps = self.normalize and self.options.ascii[ord("A")] == ord("a")
        self.before, self.after = single
        self.pair_before, self.pair_between, self.pair_after = pair
        self.piece_starts.push_back(0)
        for t in first_pieces + later_pieces:
            self.pieces.append(<const char*>t, len(t))
            self.piece_starts.push_back(self.pieces.size())
        self.skip.assign(len(tokens), 0)
        for i in skip_ids:
            self.skip[i] = 1
        self.special_starts.push_back(0)
        for t, i in special_tokens:
            if t:
                self.specials.append(<const char*>t, len(t))
                self.special_starts.push_back(self.specials.size())
                self.special_ids.push_back(i)
                self.special_first[t[0]] = 1
        self.special_byte = -1
        for b in range(256):
            if self.special_first[b]:
                self.special_byte = b if self.special_byte == -1 else -2
        self.special_byte = max(self.special_byte, -1)

    cdef bint _reachable(self, const uint8_t* p, int64_t n, bint initial, PageCache& c):
        """Whether the pre-tokenizer can hand WordPiece this piece: no whitespace and no punctuation
        in it, or (word-initial) one punctuation character alone. The others stay out of the tables."""
        cdef int64_t i = 0
        cdef int ln
        cdef uint32_t cp
        cdef uint32_t f
        while i < n:
            ln = utf8_decode(p + i, n - i, &cp)
            f = cached_flags(c, cp)
            if f & BERT_SPLIT or (f & BERT_PUNCT and not (initial and ln == n)):
                return False
            i += ln
        return n > 0

    @property
    def n_vocab(self) -> int:
        return <int>self.starts.size()

    # -- text -> ids -------------------------------------------------------------------------------
    cdef void _word(self, const uint8_t* p, int64_t n, int64_t chars, IdVector& out) noexcept nogil:
        """WordPiece of one word: greedy longest match, the unknown token if any piece is missing."""
        cdef size_t before = out.size()
        cdef int64_t s = 0, ln
        cdef int32_t found
        if chars > self.max_chars:
            out.push_back(self.unk)
            return
        while s < n:
            found = byte_trie_longest(&self.trie, s > 0, p + s, n - s, &ln)
            if found < 0:
                out.resize(before)
                out.push_back(self.unk)
                return
            out.push_back(found)
            s += ln

    cdef void _encode_normalized(self, const uint8_t* q, int64_t m, IdVector& out,
                                 NfWork& w) noexcept nogil:
        """Pre-tokenize normalized text (whitespace splits, punctuation stands alone) and encode
        each word."""
        cdef int64_t i = 0, start, chars
        cdef int ln
        cdef uint32_t cp
        cdef uint32_t f
        cdef uint8_t cls
        while i < m:
            if q[i] < 0x80:
                cls = self.ascii_class[q[i]]
                ln = 1
            else:
                ln = utf8_decode(q + i, m - i, &cp)
                f = cached_flags(w.cache, cp)
                cls = SPLIT if f & BERT_SPLIT else PUNCT if f & BERT_PUNCT else WORD
            if cls == SPLIT:
                i += ln
                continue
            if cls == PUNCT:
                if ln == 1 and self.ascii_word[q[i]] >= 0:
                    out.push_back(self.ascii_word[q[i]])
                else:
                    self._word(q + i, ln, 1, out)
                i += ln
                continue
            start = i
            chars = 1
            i += ln
            while i < m:
                if q[i] < 0x80:
                    if self.ascii_class[q[i]] != WORD:
                        break
                    i += 1
                else:
                    ln = utf8_decode(q + i, m - i, &cp)
                    if cached_flags(w.cache, cp) & (BERT_SPLIT | BERT_PUNCT):
                        break
                    i += ln
                chars += 1
            self._word(q + start, i - start, chars, out)

    cdef void _encode_span(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """The general path: normalize p[:n] into a buffer (unless it stays as is), then encode."""
        ws.norm.clear()
        if self.normalize and bert_normalize_text(p, n, self.options, ws.norm, ws.w):
            self._encode_normalized(<const uint8_t*>ws.norm.data(), ws.norm.size(), out, ws.w)
        else:
            self._encode_normalized(p, n, out, ws.w)

    cdef void _encode_text(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Normalization, pre-tokenization and lookup fused in one pass over ASCII words (folded into
        a small buffer as they are read); a word with any other byte, and the text up to the next
        ASCII space or punctuation, takes the general path. BERT's normalizer works character by
        character (marks never reorder across ASCII), so the text can be cut at such bytes."""
        cdef uint64_t chunks[WORD_BUF / 8 + 1]    # the folded word, written 8 bytes at a time
        cdef const uint8_t* buf = <const uint8_t*>chunks
        cdef int64_t i = 0, start, e, k, ln
        cdef uint64_t x, stop
        cdef uint8_t b, cls
        cdef int32_t found
        while i < n:
            b = p[i]
            cls = self.raw_class[b] if b < 0x80 else OTHER
            if cls == SPLIT:
                i += 1
                continue
            if cls == PUNCT:
                if self.ascii_word[b] >= 0:
                    out.push_back(self.ascii_word[b])
                else:
                    chunks[0] = b
                    self._word(buf, 1, 1, out)
                i += 1
                continue
            start = i
            k = 0
            while True:             # the alphanumeric run, 8 bytes at a time, folded as it is read
                if i + 8 <= n:
                    memcpy(&x, p + i, 8)
                else:
                    x = 0
                    memcpy(&x, p + i, n - i)
                stop = ~block_alnum(x) & 0x8080808080808080ULL
                if stop == 0 and k + 8 <= WORD_BUF:
                    chunks[k >> 3] = (x | block_capitals(x) >> 2) if self.fold_caps else x
                    k += 8
                    i += 8
                    continue
                if stop == 0:
                    k = -1          # too long for the buffer
                    break
                ln = ctz64(stop) >> 3
                x &= ~(0xFFFFFFFFFFFFFFFFULL << (8 * ln)) if ln else 0
                x = (x | block_capitals(x) >> 2) if self.fold_caps else x
                k += ln
                i += ln
                break
            if k <= 0 or (i < n and (p[i] >= 0x80 or self.raw_class[p[i]] == WORD or self.raw_class[p[i]] == OTHER)):
                e = i
                while e < n and (p[e] >= 0x80 or self.raw_class[p[e]] == WORD or self.raw_class[p[e]] == OTHER):
                    e += 1
                self._encode_span(p + start, e - start, out, ws)
                i = e
                continue
            chunks[k >> 3] = x
            found = -1
            if k <= self.max_chars:
                found = bytes_table_get_head(&self.initial, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                             self.ends.data(), buf, k, word_hash(chunks, x, k), chunks[0],
                                             chunks[1] if k > 8 else 0)
            if found >= 0:
                out.push_back(found)
            else:
                self._word(buf, k, k, out)

    cdef void _encode_rows(self, const BinaryView& v, const BinaryView* second, int64_t first, int64_t last,
                           bint template, bint keep_ids, IdRows& res) noexcept nogil:
        """Rows [first, last) of `v` (with `second`: pairs of rows, NULL when either is NULL)."""
        cdef Workspace ws
        cdef int64_t r, s, before
        page_cache_init(ws.w.cache)
        for r in range(first, last):
            if not view_valid(v, r) or (second != NULL and not view_valid(second[0], r)):
                res.lengths.push_back(-1)
                continue
            before = <int64_t>res.ids.size()
            if template:
                _extend(res.ids, self.before if second == NULL else self.pair_before)
            s = view_start(v, r)
            self._encode_text(v.values + s, view_end(v, r) - s, res.ids, ws)
            if second != NULL:
                if template:
                    _extend(res.ids, self.pair_between)
                s = view_start(second[0], r)
                self._encode_text(second.values + s, view_end(second[0], r) - s, res.ids, ws)
            if template:
                _extend(res.ids, self.after if second == NULL else self.pair_after)
            res.lengths.push_back(<int64_t>res.ids.size() - before)
            if not keep_ids:
                res.ids.clear()

    def encode_arrow(self, texts, int threads=1, bint counts_only=False, bint template=True, pairs=None):
        """Ids (list<int32>) or token counts (int64) of a pyarrow string array, NULL staying NULL;
        `template`: add the post-processor's tokens around each row; `pairs`: a second array of the
        same length, each row encoded as the pair (texts[i], pairs[i])."""
        cdef list keep = []
        cdef RowRun run
        cdef int k
        rows_open(run, texts, keep, threads, True)  # taking over chunks: Ctrl-C stops the threads between them
        cdef BinaryView w
        cdef WordPieceCall call
        call.second = NULL
        if pairs is not None:
            w = binary_view(pairs, keep)
            if w.length != run.view.length:
                raise ValueError(f"{run.view.length} texts but {w.length} pairs")
            call.second = &w
        cdef vector[IdRows] parts = vector[IdRows](run.parts)
        if not counts_only:  # the first part's vector ends up holding every id
            id_pool_take(self.pool, parts[0].ids)
        call.encoder = <void*>self
        call.template = template
        call.keep_ids = not counts_only
        call.parts = parts.data()
        rows_run(run, _wordpiece_rows, _wordpiece_open, &call)
        cdef vector[IdRows] ordered
        for k in run.order:
            id_rows_move(ordered, parts[k])
        return id_rows_arrow(ordered, counts_only, self.pool, run.threads)

    # -- one str from Python, without Arrow ---------------------------------------------------------
    cdef int64_t _next_special(self, const uint8_t* p, int64_t i, int64_t n, int32_t* found,
                               int64_t* length) noexcept nogil:
        """Where the first special token's text in p[i:n] starts (-1: nowhere), the longest one there
        (its id in `found`, its length in `length`): what HF's and `Tokenizer._split_specials`'s
        leftmost, longest-first match finds."""
        cdef int64_t k, ln
        cdef const uint8_t* at
        if self.special_starts.size() == 1:
            return -1
        while i < n:
            if self.special_byte >= 0:
                at = <const uint8_t*>memchr(p + i, self.special_byte, n - i)
                if at == NULL:
                    return -1
                i = at - p
            elif not self.special_first[p[i]]:
                i += 1
                continue
            length[0] = 0
            for k in range(<int64_t>self.special_starts.size() - 1):
                ln = self.special_starts[k + 1] - self.special_starts[k]
                if length[0] < ln <= n - i and memcmp(p + i, self.specials.data() + self.special_starts[k], ln) == 0:
                    found[0] = self.special_ids[k]
                    length[0] = ln
            if length[0]:
                return i
            i += 1
        return -1

    cdef void _encode_matching(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """`_encode_text` of the text between the special tokens' texts in p[:n], each of them its id."""
        cdef int64_t start = 0, at, ln
        cdef int32_t found
        while True:
            at = self._next_special(p, start, n, &found, &ln)
            if at < 0:
                break
            self._encode_text(p + start, at - start, out, ws)
            out.push_back(found)
            start = at + ln
        self._encode_text(p + start, n - start, out, ws)

    cdef object _encode_one(self, str text, bint template, bint counts_only, int specials):
        """Ids (list) or their number of one str, from its own UTF-8 buffer (UnicodeEncodeError for a
        surrogate); `specials`: special tokens' text encoded as text (SPECIALS_TEXT), matched
        (SPECIALS_MATCH), or None for a text that holds some (SPECIALS_REFUSE)."""
        cdef Py_ssize_t n
        cdef const uint8_t* p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
        return self._encode_utf8(p, n, template, counts_only, specials)

    cdef object _encode_utf8(self, const uint8_t* p, int64_t n, bint template, bint counts_only, int specials):
        """`_encode_one` of a str's UTF-8 p[:n] (the str held by the caller). The ids go to the
        encoder's scratch vector (its memory kept for the next call); short texts use the encoder's
        workspace with the GIL held (nothing in `_encode_text` lets other Python code run), long ones
        their own without it."""
        cdef IdVector out
        cdef object result
        cdef int32_t found
        cdef int64_t ln
        if specials == SPECIALS_REFUSE and self._next_special(p, 0, n, &found, &ln) >= 0:
            return None
        out.swap(self.scratch)  # (swapped back below: a call made meanwhile, from a finalizer or a thread, gets its own)
        out.clear()
        if n < NOGIL_BYTES:
            if specials == SPECIALS_MATCH:
                self._encode_matching(p, n, out, self.gil_ws)
            else:
                self._encode_text(p, n, out, self.gil_ws)
        else:
            self._encode_long(p, n, out, specials == SPECIALS_MATCH)
        if counts_only:
            result = <int64_t>out.size() + <int64_t>(self.before.size() + self.after.size()) * template
        else:
            if self.id_objects is None:
                self.id_objects = list(range(self.starts.size()))
            result = self._framed_list(out, template)
        if self.scratch.capacity() < out.capacity() <= SCRATCH_IDS:
            out.swap(self.scratch)
        return result

    cdef void _encode_long(self, const uint8_t* p, int64_t n, IdVector& out, bint match) noexcept:
        """`_encode_text` (`_encode_matching` when `match`) of a long text, without the GIL, in a
        workspace of its own."""
        cdef Workspace ws
        page_cache_init(ws.w.cache)
        with nogil:
            out.reserve(n // 2 + 16)  # (address space only: see `_encode_rows`)
            if match:
                self._encode_matching(p, n, out, ws)
            else:
                self._encode_text(p, n, out, ws)

    cdef list _framed_list(self, const IdVector& ids, bint template):
        """`ids` as a Python list of the shared int objects, inside the post-processor's tokens when
        `template`."""
        cdef int64_t n = <int64_t>ids.size()
        cdef int64_t a = <int64_t>self.before.size() if template else 0
        cdef int64_t b = <int64_t>self.after.size() if template else 0
        cdef list out = PyList_New(a + n + b)
        id_list_fill(out, 0, self.before.data(), a, self.id_objects)
        id_list_fill(out, a, ids.data(), n, self.id_objects)
        id_list_fill(out, a + n, self.after.data(), b, self.id_objects)
        return out

    def encode_str(self, str text not None, bint template=True, bint counts_only=False, bint unless_special=False,
                   bint match_special=False):
        """Ids (a list of int) of one str, or with `counts_only` their number, with the post-processor's
        tokens around them when `template`: the direct path, no Arrow on the way. Special tokens'
        text is text, or with `match_special` each is its token (as `encode(text, allowed_special="all")`);
        with `unless_special`, None for a text that holds a special token's text (which the caller
        matches or refuses)."""
        return self._encode_one(text, template, counts_only,
                                SPECIALS_MATCH if match_special else SPECIALS_REFUSE if unless_special else SPECIALS_TEXT)

    def encode_strs(self, list texts not None, bint template=True, bint counts_only=False):
        """`encode_str` of every str of `texts` (a list of results)."""
        return [self._encode_one(text, template, counts_only, SPECIALS_TEXT) for text in texts]

    # -- ids -> text -------------------------------------------------------------------------------
    cdef TokenPieces _pieces(self, bint skip_special):
        """What decoding reads: each id's text at the start of a sequence and after it (none for a
        special token's when `skip_special`)."""
        cdef TokenPieces pieces
        pieces.data = self.pieces.data()
        pieces.starts = self.piece_starts.data()   # piece k ends where piece k + 1 starts
        pieces.ends = self.piece_starts.data() + 1
        pieces.n_ids = <int64_t>self.starts.size()
        pieces.later = pieces.n_ids
        pieces.valid = NULL
        pieces.skip = self.skip.data() if skip_special else NULL
        return pieces

    def decode_arrow(self, ids, bint skip_special=True):
        """Text (large_string) of each row of a list<integer> array as HF's WordPiece decoder gives
        it, special tokens left out when `skip_special`; NULL stays NULL, an unknown id raises ValueError."""
        return decode_arrow(ids, self._pieces(skip_special), pa.large_string())

    def decode_ids(self, ids, bint skip_special=True) -> bytes:
        """The UTF-8 of `decode_arrow` for one sequence of ids (Python ints), without Arrow."""
        return decode_ids(ids, self._pieces(skip_special))

    def decode_text(self, ids, str errors not None="replace", bint skip_special=True) -> str:
        """`decode_ids(ids, skip_special).decode("utf-8", errors)` in one call, without the bytes object."""
        return decode_text(ids, self._pieces(skip_special), errors)

    def token_bytes(self, int64_t token_id) -> bytes:
        """The vocabulary entry of one id (continuation prefix included); `token_id_error` (as
        tiktoken's: UnknownTokenError, a KeyError, or OverflowError for an id no u32 holds) for an id
        without one."""
        if token_id < 0 or token_id >= <int64_t>self.starts.size():
            raise token_id_error(token_id)
        return self.vocab.substr(self.starts[token_id], self.ends[token_id] - self.starts[token_id])


cdef extern from "Python.h":
    # its UTF-8, or NULL with the error set (no exception raised here: the caller clears it)
    const char* _utf8_or_null "PyUnicode_AsUTF8AndSize"(object, Py_ssize_t*)


cdef object _ALL = "all"
cdef object _NOTHING = frozenset()


cdef inline int _policy(object policy) except -1:
    """A special-token policy of `encode`: 0 when empty, 1 when "all", 2 otherwise."""
    if policy is _ALL:  # (the usual cases first, by identity: the literal "all" is one interned str)
        return 1
    if policy is _NOTHING or not policy:
        return 0
    return 1 if policy == "all" else 2


cdef class WordPieceDirect:
    """The C half of `WordPieceTokenizer` (its other base): the encoder and the added-token path held
    in C fields, and `encode`, which reads them without an attribute lookup (for a short text the
    lookups, the interpreter's frame and keyword binding would cost more than the encoding)."""
    cdef public WordPieceEncoder _encoder
    cdef public object _added                   # the tokenizer's AddedRows, or None

    def encode(self, text, *, allowed_special=_NOTHING, disallowed_special=_ALL):
        """`Tokenizer.encode`: one call to the encoder when the tokenizer has no added tokens to split
        at and the policy is one that the text is all it depends on: every special token allowed
        (each matched), or none (their text is text), or every one disallowed and the text holds
        none; otherwise, and for a text that is not a str or holds a surrogate, the base class's
        `encode`, with its errors."""
        cdef int allowed, disallowed
        cdef Py_ssize_t n
        cdef const char* p
        if type(text) is str and self._added is None:
            allowed = _policy(allowed_special)
            disallowed = _policy(disallowed_special)
            if allowed < 2 and disallowed < 2:
                p = _utf8_or_null(text, &n)
                if p == NULL:  # (a surrogate: the base class gives the error that says so)
                    PyErr_Clear()
                else:
                    ids = self._encoder._encode_utf8(<const uint8_t*>p, n, True, False, SPECIALS_MATCH if allowed else
                                                     SPECIALS_REFUSE if disallowed else SPECIALS_TEXT)
                    if ids is not None:
                        return ids
        return self._generic_encode(text, allowed_special, disallowed_special)


cdef struct WordPieceCall:      # what the threads of one encode_arrow call share
    void* encoder               # the WordPieceEncoder (borrowed: the call holds it)
    const BinaryView* second    # pairs' second texts, or NULL
    bint template
    bint keep_ids
    IdRows* parts


cdef void _wordpiece_open(void* task, const RowRun& run, int thread, int part, int64_t first,
                          int64_t last) noexcept nogil:
    """Before a thread's first rows of a part (its own run, or a chunk taken over): room for the ids of
    rows [first, last) at once. Text gives 0.05-0.55 ids per byte; reserving (address space only)
    spares the copies and fresh pages of growing chunk by chunk."""
    cdef WordPieceCall* call = <WordPieceCall*>task
    if call.keep_ids and last > first:
        call.parts[part].ids.reserve(view_bytes(run.view, first, last) // 2 + 4 * (last - first) + 16)


cdef int64_t _wordpiece_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                             int64_t last) noexcept nogil:
    """Rows [first, last) into part `part` (nothing fails: -1)."""
    cdef WordPieceCall* call = <WordPieceCall*>task
    (<WordPieceEncoder>call.encoder)._encode_rows(run.view, call.second, first, last, call.template, call.keep_ids,
                                                  call.parts[part])
    return -1
