# cython: language_level=3
"""Words and split words of each document for a WordPiece tokenizer, read off the document's own
ids instead of encoding each word alone (what the judge's fertility and split-word share need).

A word (a `str.split` word) encoded alone gives the tokens of the BERT pre-tokens in it, and in the
whole document those same tokens follow one another: each pre-token is one word-initial token and
the continuation tokens after it. So each word takes from the document's ids as many pre-tokens as
its characters make after BERT's normalizer: each punctuation character and each CJK ideograph
alone, each run of the other characters one, what the normalizer drops (control characters,
nonspacing marks when it strips accents) no part. Where a `str.split` space is no BERT space (the
normalizer drops \\x0b \\x0c \\x1c-\\x1f \\x85) two words can share a pre-token: then the document
holds fewer pre-tokens than its words and the walk runs out; where one is a character of a word
(\\x1c-\\x1f without clean_text) the row is not read either. Such rows are left to the caller
(`redo`), as is any other row whose ids do not line up. One pass over each row's ids, one over its
bytes, the rows shared among threads, GIL released. Plain ASCII text (letters, digits, punctuation
and the whitespace both splits agree on) is counted 64 bytes at a time from bit masks (`ascii_block`).
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector

import numpy as np
import pyarrow as pa

from sqltok.native.portable cimport ctz64, popcount64
from sqltok.native.arrow_buffers cimport BinaryView, buffer_address, view_end, view_start, view_valid
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.normalizers.bert_normalize cimport (BERT_CJK, BERT_MN, BERT_REMOVE, BERT_SPACE, NF_POOL, BertOptions,
                                                bert_options, nf_bert_nfd_of)
from sqltok.normalizers.unicode_normalize cimport S_BASE, S_COUNT, PageCache, cached_flags, page_cache_init
from sqltok.pretokenizer.matcher cimport next_char
from sqltok.pretokenizer.str_split cimport is_space


cdef extern from "normalization_tables.h" nogil:
    enum:
        BERT_SPLIT
        BERT_PUNCT


cdef extern from "bert_ascii.h" nogil:
    ctypedef struct BertAscii "sqltok_bert_ascii":
        uint64_t space
        uint64_t run
        uint64_t alone
    void bert_classify64 "sqltok_bert_classify64"(const unsigned char* p, BertAscii* c)


cdef enum:
    BLOCK = 64      # bytes classified at once (bert_ascii.h)
    MIN_BLOCK = 16  # fewer plain bytes than this ahead: left to the character loop


cdef enum:
    RUN = 0         # joins the run of letters, digits and the like: one pre-token per run
    ALONE = 1       # a pre-token alone (punctuation, a CJK ideograph)
    DROP = 2        # dropped by the normalizer
    BREAK = 3       # BERT whitespace: ends a run
    CLASS = 3       # the class bits of an ASCII byte's entry
    SPACE = 4       # its bit for str.split whitespace
    OTHER = 8       # the entry of a byte of a non-ASCII character


cdef struct Count:  # the pre-tokens of a word so far
    int64_t pretokens
    bint in_run


cdef inline void add(Count& c, uint8_t cls) noexcept nogil:
    if cls == RUN:
        c.pretokens += not c.in_run
        c.in_run = True
    elif cls != DROP:
        c.pretokens += cls == ALONE
        c.in_run = False


cdef struct Walk:   # where a row's pre-tokens start in its ids, and the next one to take
    const int64_t* heads    # the positions of its word-initial ids, then one past its last id
    int64_t j               # the next pre-token
    int64_t count           # its pre-tokens


cdef void walk_init(Walk& w, vector[int64_t]& heads, const int32_t* ids, int64_t k, int64_t end,
                    const uint8_t* continuation) noexcept nogil:
    """Walk the pre-tokens of ids[k:end] (a word-initial id and the continuations after it each);
    none to take (count -1) when those do not start with a word-initial id (or end before k)."""
    cdef int64_t m = 0, i
    w.j = 0
    if end < k or (k < end and continuation[ids[k]]):
        w.count = -1
        return
    heads.resize(end - k + 1)
    for i in range(k, end):  # without branches: each position is written, kept when word-initial
        heads[m] = i
        m += not continuation[ids[i]]
    heads[m] = end
    w.heads, w.count = heads.data(), m


cdef inline bint end_word(Walk& w, const Count& word, int64_t* split) noexcept nogil:
    """Take the ids of a word's pre-tokens (`word`), counting it split when they are two or more;
    False when the row's pre-tokens run out."""
    if w.j + word.pretokens > w.count:
        return False
    split[0] += w.heads[w.j + word.pretokens] - w.heads[w.j] >= 2
    w.j += word.pretokens
    return True


cdef inline uint8_t split_class(uint32_t f) noexcept nogil:
    """The class BERT's pre-tokenizer gives a character of normalized text (flags f)."""
    return BREAK if f & BERT_SPLIT else ALONE if f & BERT_PUNCT else RUN


cdef struct Classes:                # what a tokenizer's normalizer and pre-tokenizer make of characters
    uint8_t bytes_[256]             # by byte: class | SPACE for ASCII, OTHER for the rest
    BertOptions options
    bint normalize
    bint ascii_blocks               # its ASCII classes are bert_ascii.h's: `ascii_block` may count


cdef void add_char(const Classes& k, Count& count, uint32_t cp, PageCache& c) noexcept nogil:
    """Count non-ASCII character cp as BERT's normalizer and pre-tokenizer see it (lowercasing
    keeps letters letters, so it is left out)."""
    cdef uint32_t f = cached_flags(c, cp), entry, j
    cdef const BertOptions* o = &k.options
    if not k.normalize:
        add(count, split_class(f))
    elif o.clean and f & BERT_REMOVE:
        return
    elif o.clean and f & BERT_SPACE:
        add(count, BREAK)
    elif o.chinese and f & BERT_CJK:
        add(count, ALONE)  # spaces put on each side
    elif not o.strip or S_BASE <= cp < S_BASE + S_COUNT:  # (Hangul decomposes to letters)
        add(count, split_class(f))
    else:
        entry = nf_bert_nfd_of(cp)
        if entry == 0:
            add(count, DROP if f & BERT_MN else split_class(f))
            return
        for j in range(entry >> 8, (entry >> 8) + (entry & 0xFF)):
            f = cached_flags(c, NF_POOL[j])
            add(count, DROP if f & BERT_MN else split_class(f))

cdef Py_ssize_t ascii_block(const unsigned char* s, Py_ssize_t i, Py_ssize_t n, Walk& w, Count& word,
                            bint* in_word, bint* lined_up, int64_t* words, int64_t* split) noexcept nogil:
    """Count the plain ASCII bytes s[i:i + x] at once (bert_ascii.h; x up to 64), as `count_row`
    would one by one, the whitespace before them having made no pre-token; x, or 0 (nothing done)
    when fewer than MIN_BLOCK plain bytes come next. From bit masks: a pre-token starts at each
    punctuation character and at each letter or digit after none; a word ends at each space after a
    non-space, and takes the pre-tokens started since the last word's end (spaces start none)."""
    cdef unsigned char buf[BLOCK]
    cdef const unsigned char* p = s + i
    cdef BertAscii c
    cdef uint64_t valid, space, run, nonspace, starts, ends
    cdef uint64_t carry_word = in_word[0], carry_run = in_word[0] and word.in_run
    cdef int x
    cdef int64_t base, pt
    if n - i < BLOCK:  # the row's end: what follows it is no plain byte
        memcpy(buf, p, n - i)
        memset(buf + (n - i), 0x80, BLOCK - (n - i))
        p = buf
    bert_classify64(p, &c)
    valid = c.space | c.run | c.alone
    x = BLOCK if valid == ~(<uint64_t>0) else ctz64(~valid)
    if x < MIN_BLOCK:
        return 0
    if x < BLOCK:
        valid = ((<uint64_t>1) << x) - 1
    space, run = c.space & valid, c.run & valid
    nonspace = valid & ~space
    starts = (c.alone & valid) | (run & ~((run << 1) | carry_run))
    ends = space & ((nonspace << 1) | carry_word)
    words[0] += popcount64(nonspace & ~((nonspace << 1) | carry_word))
    base = w.j + (word.pretokens if in_word[0] else 0)
    while ends and lined_up[0]:
        pt = base + popcount64(starts & ((((<uint64_t>1) << ctz64(ends))) - 1))
        if pt > w.count:
            lined_up[0] = False
            break
        split[0] += w.heads[pt] - w.heads[w.j] >= 2
        w.j = pt
        ends &= ends - 1
    in_word[0] = (nonspace >> (x - 1)) & 1
    if in_word[0]:
        word.pretokens = base + popcount64(starts) - w.j
        word.in_run = (run >> (x - 1)) & 1
    return x


cdef bint count_row(const Classes& k, const unsigned char* s, Py_ssize_t n, Walk& w, PageCache& c,
                    int64_t* words, int64_t* split) noexcept nogil:
    """Count the words and split words of row s[:n] in one pass over its characters: each word
    takes its pre-tokens' ids as it ends, and the whitespace between words must make no
    pre-token. The ASCII bytes of a word are counted in a loop of their own, without branches
    but the one at its end. False when the row's ids do not line up."""
    cdef Count word, between   # the open word's pre-tokens; those of the whitespace since the last word
    cdef bint in_word = False, space, lined_up = True
    cdef Py_ssize_t i = 0, nx, retry = 0, taken
    cdef uint32_t cp = 0
    cdef uint8_t e, cls
    cdef int64_t pretokens
    cdef bint in_run
    cdef const uint8_t* table = &k.bytes_[0]
    word.pretokens = between.pretokens = 0
    word.in_run = between.in_run = False
    while i < n:
        e = table[s[i]]
        if k.ascii_blocks and i >= retry and not e & OTHER and lined_up and between.pretokens == 0:
            taken = ascii_block(s, i, n, w, word, &in_word, &lined_up, words, split)
            if taken:
                i += taken
                between.in_run = False
                continue
            retry = i + BLOCK  # text of few plain bytes in a row: not tried again for a while
        if e & OTHER:
            nx = next_char(s, i, n, &cp)
            space = is_space(cp)
        else:
            space = e & SPACE
            nx = i + 1
        if space and in_word:
            in_word = False
            lined_up = lined_up and end_word(w, word, split)
        elif not space and not in_word:
            in_word = True
            words[0] += 1
            lined_up = lined_up and between.pretokens == 0
            word.pretokens = between.pretokens = 0
            word.in_run = between.in_run = False
        if e & OTHER:
            if space:
                add_char(k, between, cp, c)
            else:
                add_char(k, word, cp, c)
            i = nx
        elif space:
            add(between, e & CLASS)
            i = nx
        else:  # ASCII in a word, up to a space or a non-ASCII byte: add() without branches
            pretokens, in_run = word.pretokens, word.in_run
            while True:
                cls = e & CLASS
                pretokens += (cls == ALONE) | ((cls == RUN) & (not in_run))
                in_run = (cls == RUN) | (in_run & (cls == DROP))
                i += 1
                if i == n:
                    break
                e = table[s[i]]
                if e & (SPACE | OTHER):
                    break
            word.pretokens, word.in_run = pretokens, in_run
    if in_word:
        lined_up = lined_up and end_word(w, word, split)
    return lined_up and w.j == w.count and between.pretokens == 0

cdef struct SplitsTask:             # one call's rows' ids and outputs
    const Classes* classes
    const uint8_t* continuation
    const int64_t* offsets
    const int32_t* values
    int64_t before, after
    int64_t* words
    int64_t* split
    uint8_t* redo


cdef int64_t count_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                        int64_t last) noexcept nogil:
    """Count rows first..last-1 (see `WordPieceWordSplits.splits`)."""
    cdef SplitsTask* t = <SplitsTask*>task
    cdef const BinaryView* v = &run.view
    cdef int64_t r, a
    cdef Walk w
    cdef vector[int64_t] heads
    cdef PageCache c
    page_cache_init(c)
    for r in range(first, last):
        if not view_valid(v[0], r):
            continue
        a = view_start(v[0], r)
        walk_init(w, heads, t.values, t.offsets[r] + t.before, t.offsets[r + 1] - t.after, t.continuation)
        if not count_row(t.classes[0], v.values + a, view_end(v[0], r) - a, w, c, &t.words[r], &t.split[r]):
            t.redo[r] = True
            t.split[r] = 0
    return -1


def _plain_class(int b) -> int:
    """The entry bert_ascii.h assumes for ASCII byte b, -1 for the bytes it leaves to `count_row`."""
    if chr(b) in " \t\n\r":
        return BREAK | SPACE
    if chr(b).isalnum():
        return RUN
    return ALONE if 0x21 <= b <= 0x7E else -1


cdef class WordPieceWordSplits:
    """A WordPiece tokenizer's character classes and continuation ids, built once per tokenizer."""
    cdef Classes classes
    cdef vector[uint8_t] continuation
    cdef int64_t before, after

    def __init__(self, normalizer, bytes prefix, list tokens, int64_t before, int64_t after):
        """`normalizer`: None or BERT's (clean_text, handle_chinese_chars, strip_accents, lowercase);
        `prefix`: the continuation prefix; `tokens`: every id's token (bytes); `before`/`after`: how
        many ids the post-processor puts around a sequence. An id is a continuation when its token
        is the prefix and more (with a prefix of punctuation, as "##", no word-initial token is;
        with another, a word-initial token taken for one leaves the walk short and the row redone)."""
        cdef PageCache c
        cdef int b, m
        cdef int64_t i
        cdef bytes t
        page_cache_init(c)
        self.classes.normalize = normalizer is not None
        if self.classes.normalize:
            self.classes.options = bert_options(normalizer[0], normalizer[1], normalizer[2], normalizer[3])
        for b in range(128):
            m = self.classes.options.ascii[b] if self.classes.normalize else b
            self.classes.bytes_[b] = (DROP if m < 0 else split_class(cached_flags(c, m))) | (SPACE if is_space(b) else 0)
            self.classes.bytes_[b + 128] = OTHER
        self.classes.ascii_blocks = all(self.classes.bytes_[b] == _plain_class(b) for b in range(128)
                                        if _plain_class(b) >= 0)
        self.continuation.resize(len(tokens))
        for i, t in enumerate(tokens):
            self.continuation[i] = t.startswith(prefix) and len(t) > len(prefix)
        self.before, self.after = before, after

    def splits(self, texts: "pa.Array", ids: "pa.LargeListArray",
               int threads=1) -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
        """(words, split words, redo) of every row (int64, int64, bool; 0, 0, False for NULL): `ids`
        the rows' large_list<int32> ids; the rows shared among up to `threads` threads. A row marked
        `redo` has its words right and its split words 0: its ids do not line up with its words
        (see the module)."""
        cdef list keep = []
        cdef RowRun run
        rows_open(run, texts, keep, threads, False)
        if len(ids) != run.view.length:
            raise ValueError("one row of ids per text")
        id_values = ids.values
        words_np = np.zeros(run.view.length, np.int64)
        split_np = np.zeros(run.view.length, np.int64)
        redo_np = np.zeros(run.view.length, np.bool_)
        cdef int64_t[::1] words = words_np, split = split_np
        cdef uint8_t[::1] redo = redo_np.view(np.uint8)
        cdef SplitsTask task
        task.classes = &self.classes
        task.continuation = self.continuation.data()
        task.offsets = (<const int64_t*>buffer_address(ids.buffers()[1])) + <int64_t>ids.offset
        task.values = (<const int32_t*>buffer_address(id_values.buffers()[1])) + <int64_t>id_values.offset
        task.before, task.after = self.before, self.after
        if run.view.length:
            task.words, task.split, task.redo = &words[0], &split[0], &redo[0]
            rows_run(run, count_rows, NULL, &task)
        return words_np, split_np, redo_np
