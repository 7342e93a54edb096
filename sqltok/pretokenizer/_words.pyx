# cython: language_level=3
"""Words (and split words) of each document: from its text alone, or with a byte-level tokenizer's ids;
and the distinct words of a batch, for a tokenizer that must encode each word alone.

A word is a maximal run of characters that are not whitespace in Python's `str.split` sense; it is
split when two or more of the document's tokens overlap its bytes (a token that spans a space and the
start of a word overlaps that word once). A row's words and split words are read off its ids alone,
each token's shape (`token_spans`) looked up once: where it starts and ends (in a word or in
whitespace) and how many runs of non-whitespace it holds. Only a token that is no UTF-8 on its own (a
piece of a character) has its shape read from the text's characters. GIL released; the split words'
rows are shared among threads.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, memset
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport (BinaryView, binary_view, buffer_address, int32_array, int64_array, view_bytes,
                                          view_end, view_start, view_valid)
from sqltok.native.bytes_table cimport bytes_hash
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.native.utf8 cimport valid_utf8_len
from sqltok.pretokenizer.str_split cimport next_word, space_at

import pyarrow as pa


cdef enum:                          # a token's shape: the low byte of its entry in `token_spans`
    TRAIL = 1                       # its last character is no whitespace
    LEAD = 2                        # its first character is no whitespace
    RUN = 4                         # one run of non-whitespace (bits 2 and up count them)
    FROM_TEXT = 0xFF                # no UTF-8 on its own (or empty, or more runs than a byte holds):
                                    # read from the text
    MAX_LENGTH = 1 << 24            # an entry holds the length above the shape


cdef uint32_t span_shape(const unsigned char* s, Py_ssize_t n, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """The shape of bytes [start, end) of the UTF-8 text s[:n] (start < end <= n), each byte of the
    class of the whole character it belongs to (runs counted past 62)."""
    cdef Py_ssize_t i = start, nx
    cdef uint32_t shape = 0
    cdef bint space, before = True   # whether the character before is whitespace (or none)
    while i > 0 and start - i < 3 and (s[i] & 0xC0) == 0x80:  # back to the character's first byte
        i -= 1
    while i < end:
        space = space_at(s, n, i, &nx)
        if i <= start and not space:
            shape |= LEAD
        if before and not space:
            shape += RUN
        before = space
        i = nx
    return shape | (not before)


def token_spans(tokens: "pa.Array") -> bytes:
    """Every id's token length and shape (uint32 per id: length << 8 | shape, see the module):
    `tokens` every id's token bytes ((large_)binary, NULL for an id without one)."""
    cdef list keep = []
    cdef BinaryView v = binary_view(tokens, keep)
    cdef vector[uint32_t] spans
    cdef int64_t r, a, n, k, step
    cdef uint32_t shape
    cdef const unsigned char* t
    spans.resize(v.length)
    for r in range(v.length):
        a = view_start(v, r)
        n = view_end(v, r) - a if view_valid(v, r) else 0
        if n >= MAX_LENGTH:
            raise ValueError(f"token {r} is {n} bytes long, more than {MAX_LENGTH - 1}")
        t = v.values + a
        k = 0
        while k < n:
            step = valid_utf8_len(<const uint8_t*>t + k, n - k)
            if step == 0:
                break
            k += step
        shape = span_shape(t, n, 0, n) if n and k == n else FROM_TEXT
        spans[r] = <uint32_t>n << 8 | (shape if shape < FROM_TEXT else FROM_TEXT)
    return PyBytes_FromStringAndSize(<const char*>spans.data(), spans.size() * sizeof(uint32_t))


cdef struct Step:                   # what a token of a given shape does to the open word
    uint8_t pieces                  # the tokens now over the open word, counted up to 2 (0: none open)
    uint8_t split                   # words it closes that two or more tokens overlap
    uint8_t words                   # words it starts


cdef uint64_t STEPS[256]             # by the token's shape: its Step after 0, 1 and 2 or more pieces,
                                    # each in STEP_BITS bits at STEP_BITS * pieces (see `pack`)

cdef enum:
    STEP_BITS = 20                  # a packed Step: the next pieces' bit offset (6 bits), split (3),
                                    # words (8)


cdef Step step(uint8_t pieces, uint32_t shape) noexcept nogil:
    """A token of `shape` after `pieces` tokens over the open word: whitespace only closes it; a
    token that starts in a word goes on with it; any other starts a word, and each further run of
    non-whitespace in it closes the one before and starts one; one that does not end in a word
    closes its last."""
    cdef Step t
    t.split = t.words = 0
    if shape < RUN:
        t.split = pieces >= 2
        t.pieces = 0
        return t
    if pieces and shape & LEAD:
        pieces = 2
    else:
        t.split = pieces >= 2
        t.words = 1
        pieces = 1
    if shape >= 2 * RUN:
        t.split += pieces >= 2
        t.words += (shape >> 2) - 1
        pieces = 1
    if not shape & TRAIL:
        t.split += pieces >= 2
        pieces = 0
    t.pieces = pieces
    return t


cdef inline uint64_t pack(Step t) noexcept nogil:
    """A Step in STEP_BITS bits: where the next token's Step is in its entry, then split and words,
    so that the row's loop carries one shift from token to token."""
    return (<uint64_t>t.pieces * STEP_BITS) | (<uint64_t>t.split << 6) | (<uint64_t>t.words << 9)


cdef int _init_steps() noexcept nogil:
    cdef int p, shape
    for shape in range(256):
        STEPS[shape] = 0
        for p in range(3):
            STEPS[shape] |= pack(step(<uint8_t>p, <uint32_t>shape)) << (STEP_BITS * p)
    return 0


_init_steps()


cdef void count_row(const unsigned char* s, Py_ssize_t n, const int32_t* ids, int64_t n_ids,
                    const uint32_t* spans, int64_t* words, int64_t* split) noexcept nogil:
    cdef int64_t k, at = 0, w = 0, sp = 0   # at: where token k starts
    cdef uint32_t entry, shape, length
    cdef uint64_t t, offset = 0             # offset: the open word's pieces, as their Step's bit offset
    for k in range(n_ids):
        entry = spans[ids[k]]
        length = entry >> 8
        shape = entry & 0xFF
        if shape == FROM_TEXT:
            if length == 0 or at >= n:
                continue
            shape = span_shape(s, n, at, at + length if at + length <= n else n)
            if shape > 0xFF:          # more runs than the table holds: as two runs, and the words between
                w += (shape >> 2) - 2
                shape = (shape & 3) | 2 * RUN
        at += length
        t = STEPS[shape] >> offset
        w += (t >> 9) & 0xFF
        sp += (t >> 6) & 7
        offset = t & 63
    words[0] += w
    split[0] += sp + (offset >= 2 * STEP_BITS)


cdef struct SplitsTask:             # one call's rows' ids, token shapes and outputs
    const int64_t* offsets
    const int32_t* values
    const uint32_t* spans
    int64_t* words
    int64_t* split


cdef int64_t count_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                        int64_t last) noexcept nogil:
    """Count rows first..last-1 (see `word_splits_arrow`)."""
    cdef SplitsTask* t = <SplitsTask*>task
    cdef int64_t r, a
    for r in range(first, last):
        if view_valid(run.view, r):
            a = view_start(run.view, r)
            count_row(run.view.values + a, view_end(run.view, r) - a, t.values + t.offsets[r],
                      t.offsets[r + 1] - t.offsets[r], t.spans, &t.words[r], &t.split[r])
    return -1


def word_splits_arrow(texts: "pa.Array", ids: "pa.LargeListArray", spans: bytes,
                      int threads=1) -> "tuple[pa.Array, pa.Array]":
    """(words, split words) of every row (int64; 0 for a NULL row): `texts` the (large_)string array the
    tokenizer encoded, `ids` its large_list<int32> ids, `spans` every token's length and shape
    (`token_spans`); the rows shared among up to `threads` threads."""
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    if len(ids) != run.view.length:
        raise ValueError("one row of ids per text")
    id_values = ids.values.cast(pa.int32())
    cdef SplitsTask task
    task.offsets = (<const int64_t*>buffer_address(ids.buffers()[1])) + <int64_t>ids.offset
    task.values = (<const int32_t*>buffer_address(id_values.buffers()[1])) + <int64_t>id_values.offset
    task.spans = <const uint32_t*><const char*>spans
    cdef vector[int64_t] words, split
    words.resize(run.view.length)
    split.resize(run.view.length)
    if run.view.length:
        task.words, task.split = words.data(), split.data()
        rows_run(run, count_rows, NULL, &task)
    return int64_array(words), int64_array(split)


cdef enum:
    HEAD_BYTES = 16                 # words up to this long are compared within their slot
    RECENT = 4096                   # slots of the cache of recent words (frequent words stay in L2)


cdef struct WordSlot:
    uint64_t hash                   # 0: empty
    uint64_t head[2]                # the word's first 16 bytes, zero-padded
    int64_t length
    int64_t number


cdef struct DistinctWords:          # the distinct words seen so far, by open addressing
    vector[WordSlot] slots          # a probe reads one slot, and the text only for words over 16 bytes
    vector[WordSlot] recent         # direct-mapped by hash: the slot a word last had here
    vector[const unsigned char*] starts   # by number, where each word first occurs


cdef inline bint same(const WordSlot& a, const WordSlot& b, const vector[const unsigned char*]& starts,
                      const unsigned char* p) noexcept nogil:
    """Whether slot `a` holds the word of `b` (p: its bytes)."""
    if a.hash != b.hash or a.length != b.length or a.head[0] != b.head[0] or a.head[1] != b.head[1]:
        return False
    return a.length <= HEAD_BYTES or memcmp(starts[a.number] + HEAD_BYTES, p + HEAD_BYTES,
                                           a.length - HEAD_BYTES) == 0


cdef void grow(DistinctWords& d) noexcept nogil:
    cdef WordSlot empty
    memset(&empty, 0, sizeof(WordSlot))
    cdef vector[WordSlot] old = d.slots
    d.slots.assign(2 * old.size(), empty)
    cdef uint64_t mask = d.slots.size() - 1, i
    cdef size_t k
    for k in range(old.size()):
        if old[k].hash:
            i = old[k].hash & mask
            while d.slots[i].hash:
                i = (i + 1) & mask
            d.slots[i] = old[k]


cdef int64_t word_number(DistinctWords& d, const unsigned char* p, int64_t n) noexcept nogil:
    """The number of word p[:n], added if it is new (the table doubles at half full)."""
    cdef WordSlot w
    w.hash = bytes_hash(<const uint8_t*>p, n)
    w.head[0] = w.head[1] = 0
    memcpy(w.head, p, n if n < HEAD_BYTES else HEAD_BYTES)
    w.length = n
    cdef WordSlot* seen = &d.recent[w.hash & (RECENT - 1)]
    if same(seen[0], w, d.starts, p):
        return seen.number
    cdef uint64_t mask = d.slots.size() - 1
    cdef uint64_t i = w.hash & mask
    while d.slots[i].hash:
        if same(d.slots[i], w, d.starts, p):
            seen[0] = d.slots[i]
            return d.slots[i].number
        i = (i + 1) & mask
    w.number = <int64_t>d.starts.size()
    d.slots[i] = w
    seen[0] = w
    d.starts.push_back(p)
    if 2 * d.starts.size() > d.slots.size():
        grow(d)
    return w.number


def distinct_words_arrow(texts: "pa.Array") -> "tuple[pa.Array, pa.Array, pa.Array]":
    """(distinct words of all rows (large_string, in order of first occurrence), the number of each
    word of every row in that list (int32, in order), where each row's words end in it (int64, one
    per row; a NULL row has none)). A tokenizer then encodes each distinct word once."""
    cdef list keep = []
    cdef BinaryView v = binary_view(texts, keep)
    cdef DistinctWords d
    cdef vector[int32_t] numbers
    cdef vector[int64_t] row_ends, offsets
    cdef vector[unsigned char] values
    cdef int64_t r, a, n, k
    cdef Py_ssize_t i, start
    cdef const unsigned char* s
    cdef WordSlot empty
    memset(&empty, 0, sizeof(WordSlot))
    d.slots.assign(1024, empty)
    d.recent.assign(RECENT, empty)
    cdef vector[int64_t] lengths
    if v.length:  # a word takes two bytes or more with the space after it: no regrowth copies
        numbers.reserve(view_bytes(v, 0, v.length) // 2 + 1)
    with nogil:
        for r in range(v.length):
            if view_valid(v, r):
                a = view_start(v, r)
                s = v.values + a
                n = view_end(v, r) - a
                i = 0
                while next_word(s, n, &i, &start):
                    numbers.push_back(<int32_t>word_number(d, s + start, i - start))
            row_ends.push_back(<int64_t>numbers.size())
        offsets.push_back(0)
        lengths.resize(d.starts.size())
        for k in range(<int64_t>d.slots.size()):
            if d.slots[k].hash:
                lengths[d.slots[k].number] = d.slots[k].length
        for k in range(<int64_t>d.starts.size()):
            values.insert(values.end(), d.starts[k], d.starts[k] + lengths[k])
            offsets.push_back(<int64_t>values.size())
    data = PyBytes_FromStringAndSize(<const char*>values.data(), values.size())
    words = pa.Array.from_buffers(pa.large_string(), d.starts.size(),
                                  [None, int64_array(offsets).buffers()[1], pa.py_buffer(data)])
    return words, int32_array(numbers), int64_array(row_ends)
