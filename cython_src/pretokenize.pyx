# cython: language_level=3
"""Pretokenization: the GPT-4o pattern (and its script-specific variant), exactly as `regex.findall`.

A hand-written, linear-time matcher over UTF-8 replaces the regex engine. Patterns (REFERENCE.md):

    main:     [^\\r\\n\\p{L}\\p{N}]?[UPPERISH]*[LOWERISH]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
            | [^\\r\\n\\p{L}\\p{N}]?[UPPERISH]+[LOWERISH]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
            | REST
    specific: ` ?\\p{L}\\p{M}*` | REST
    REST:     \\p{N}{1,3} | ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*` | \\s*[\\r\\n]+ | \\s+(?!\\S) | \\s+

with UPPERISH = [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}], LOWERISH = [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}] and \\s the
Unicode White_Space property (what `regex` means by \\s). Every character is matched by some branch,
so the pretokens tile the text and the matcher only reports where each one ends. Backtracking is
resolved by forward scans: `[UPPERISH]*[LOWERISH]+` ends after the LOWERISH run that follows the
longest UPPERISH run, else right after the last LOWERISH character (Lm, Lo, M) inside that run; the
optional prefix may itself be a mark that, when the prefixed word fails, matches alone.
`(?i:...)` folds only U+017F LONG S onto an ASCII letter of the contractions (to `s`).

Script-aware mode (the reference `Pretokenizer.pretokenize`) cuts the text into single-script runs
by the Unicode Script property and matches each run as its own string:
- Inherited characters stay in the current run, and so do the Common/Unknown ones before them: an
  Inherited character after trailing punctuation keeps that punctuation in the current run;
- Common/Unknown characters never start a run; leading ones (and leading Inherited ones) join the
  first real run;
- a new real script ends the current run right after its last non-Common/Unknown character;
- runs of Han, Hiragana, Katakana, Thai, Myanmar, Khmer and Lao use the script-specific pattern,
  all others (and a text of only Common/Inherited/Unknown characters) the main pattern.
Input must be valid UTF-8 (other bytes are never read out of bounds, but split arbitrarily).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from arrow_buffers cimport binary_offsets_and_data, buffer_address
from pretokenize cimport (SC_COUNT, SC_NAMES, UC_LL, UC_LM, UC_LO, UC_LT, UC_LU, UC_M, UC_N, UC_WS,
                         pretokenize_utf8, uc_entry)

import pyarrow as pa

#: Unicode version of the character tables.
UNICODE_VERSION = "17.0.0"
#: Class bits of a table entry (see `unicode_table`); \\s is White_Space.
CLASS_BITS = {"Lu": UC_LU, "Ll": UC_LL, "Lt": UC_LT, "Lm": UC_LM, "Lo": UC_LO, "M": UC_M, "N": UC_N,
              "s": UC_WS}

# ---------------------------------------------------------------------------------------------------
# Python API

def pretokenize(text: str, script_aware: bool = True) -> list:
    """Pretokens of `text` (list[str]), as the reference pretokenizer gives them.

    script_aware=False is the reference's simple mode: the main pattern over the whole text.
    """
    data = text.encode("utf-8")
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = len(data)
    cdef vector[int64_t] ends
    cdef bint aware = script_aware
    cdef int64_t start = 0, end
    with nogil:
        pretokenize_utf8(s, n, aware, ends)
    out = []
    for end in ends:
        out.append(PyUnicode_DecodeUTF8(<const char*>s + start, end - start, NULL))
        start = end
    return out


def unicode_table() -> tuple:
    """(entries: list[int], script_names: tuple[str, ...]): the table entry of every code point
    (class bits | script code << 8) and the script name of each code, for tests and inspection."""
    entries = [uc_entry(cp) for cp in range(0x110000)]
    return entries, tuple(SC_NAMES[i].decode() for i in range(SC_COUNT))


cdef struct StringColumn:
    const uint8_t* validity  # NULL when no row is NULL
    const uint8_t* offsets
    const uint8_t* data
    int64_t offset  # the array's slice offset
    int64_t length
    bint large


cdef inline bint row_valid(const StringColumn* col, int64_t r) noexcept nogil:
    cdef int64_t bit = col.offset + r
    return col.validity == NULL or (col.validity[bit >> 3] >> (bit & 7)) & 1


cdef inline int64_t row_offset(const StringColumn* col, int64_t r) noexcept nogil:
    """Byte offset in col.data where row r starts (r == length: where the last row ends)."""
    if col.large:
        return (<const int64_t*>col.offsets)[col.offset + r]
    return (<const int32_t*>col.offsets)[col.offset + r]


cdef object string_column(object arr, StringColumn* col):
    """Fill `col` with views of a pyarrow (large_)string array (string_view is cast; a ChunkedArray
    is combined); return the array whose buffers the views point into."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr, off_buf, val_buf, large = binary_offsets_and_data(arr)
    col.validity = buffer_address(arr.buffers()[0]) if arr.null_count else NULL
    col.offsets = buffer_address(off_buf)
    col.data = buffer_address(val_buf)
    col.offset = arr.offset
    col.length = len(arr)
    col.large = large
    return arr


# ---------------------------------------------------------------------------------------------------
# Counting pretokens: an open-addressing map over byte slices of the input

cdef struct Entry:
    const unsigned char* key
    int64_t size
    int64_t count
    uint64_t hash


cdef inline uint64_t load64(const unsigned char* p) noexcept nogil:
    cdef uint64_t w
    memcpy(&w, p, 8)
    return w


cdef inline uint64_t load32(const unsigned char* p) noexcept nogil:
    cdef uint32_t w
    memcpy(&w, p, 4)
    return w


cdef inline bint same_bytes(const unsigned char* a, const unsigned char* b, Py_ssize_t n) noexcept nogil:
    """a[:n] == b[:n], by whole words (short tails as overlapping loads, like `hash_bytes`)."""
    while n > 8:
        if load64(a) != load64(b):
            return False
        a += 8
        b += 8
        n -= 8
    if n >= 4:
        return load32(a) == load32(b) and load32(a + n - 4) == load32(b + n - 4)
    return n == 0 or (a[0] == b[0] and a[n >> 1] == b[n >> 1] and a[n - 1] == b[n - 1])


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # splitmix64 finalizer
    h ^= h >> 30
    h *= <uint64_t>0xBF58476D1CE4E5B9ULL
    h ^= h >> 27
    h *= <uint64_t>0x94D049BB133111EBULL
    return h ^ (h >> 31)


cdef inline uint64_t hash_bytes(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """A 64-bit hash of p[:n] reading whole words (short tails as overlapping loads)."""
    cdef uint64_t h = <uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL
    while n > 8:
        h = mix(h ^ load64(p))
        p += 8
        n -= 8
    if n >= 4:
        h ^= load32(p) | (load32(p + n - 4) << 32)
    elif n > 0:
        h ^= <uint64_t>p[0] | (<uint64_t>p[n >> 1] << 8) | (<uint64_t>p[n - 1] << 16)
    return mix(h)


cdef inline void place(vector[uint64_t]& slots, uint64_t h, uint64_t index) noexcept nogil:
    cdef uint64_t mask = slots.size() - 1, j = h & mask
    while slots[j] != 0:
        j = (j + 1) & mask
    slots[j] = ((h >> 32) << 32) | (index + 1)


cdef int grow(vector[uint64_t]& slots, const vector[Entry]& entries) except -1 nogil:
    cdef size_t i
    slots.assign(2 * slots.size(), 0)
    for i in range(entries.size()):
        place(slots, entries[i].hash, i)
    return 0


cdef inline int count_add(vector[uint64_t]& slots, vector[Entry]& entries,
                          const unsigned char* key, int64_t size) except -1 nogil:
    """Count one occurrence of the byte slice key[:size]."""
    cdef uint64_t h = hash_bytes(key, size), mask = slots.size() - 1, j = h & mask, slot
    cdef Entry* e
    while True:
        slot = slots[j]
        if slot == 0:
            break
        if (slot >> 32) == (h >> 32):
            e = &entries[(slot & 0xFFFFFFFFULL) - 1]
            if e.size == size and same_bytes(e.key, key, size):
                e.count += 1
                return 0
        j = (j + 1) & mask
    slots[j] = ((h >> 32) << 32) | (entries.size() + 1)
    entries.push_back(Entry(key, size, 1, h))
    if 2 * entries.size() > slots.size():
        grow(slots, entries)
    return 0


cdef object bytes_of(size_t size, char** data):
    """A new bytes object of `size` bytes to fill through `data` before anyone else sees it."""
    out = PyBytes_FromStringAndSize(NULL, size)
    data[0] = PyBytes_AS_STRING(out)
    return out


def count_pretokens(arr, script_aware: bool = True) -> tuple:
    """Count the pretokens of a batch of documents.

    arr: pyarrow (large_)string or string_view array (or ChunkedArray); NULL and empty documents
    are skipped and counted. Returns (pretokens: large_binary Array, counts: int64 Array,
    stats: dict with "documents", "null", "empty", "bytes"), pretokens in first-seen order.
    """
    cdef StringColumn col
    keep = string_column(arr, &col)
    cdef bint aware = script_aware
    cdef vector[Entry] entries
    cdef vector[uint64_t] slots
    cdef vector[int64_t] ends
    cdef int64_t r, a, b, start, documents = 0, nulls = 0, empty = 0, total = 0, size = 0
    cdef size_t k, expected = 1024
    if col.length:  # guess: one unique pretoken per 64 bytes (English: one per ~90)
        expected += <size_t>(row_offset(&col, col.length) - row_offset(&col, 0)) // 64
    entries.reserve(expected)
    slots.assign(1 << 11, 0)
    while slots.size() < 2 * expected:
        slots.resize(2 * slots.size())
    with nogil:
        for r in range(col.length):
            if not row_valid(&col, r):
                nulls += 1
                continue
            a = row_offset(&col, r)
            b = row_offset(&col, r + 1)
            if a == b:
                empty += 1
                continue
            documents += 1
            total += b - a
            ends.clear()
            pretokenize_utf8(col.data + a, b - a, aware, ends)
            start = 0
            for k in range(ends.size()):
                count_add(slots, entries, col.data + a + start, ends[k] - start)
                start = ends[k]
        for k in range(entries.size()):
            size += entries[k].size
    cdef char* off_p
    cdef char* val_p
    cdef char* cnt_p
    cdef int64_t m = entries.size()
    off = bytes_of((m + 1) * sizeof(int64_t), &off_p)
    val = bytes_of(size, &val_p)
    cnt = bytes_of(m * sizeof(int64_t), &cnt_p)
    with nogil:
        size = 0
        (<int64_t*>off_p)[0] = 0
        for r in range(m):
            memcpy(val_p + size, entries[r].key, entries[r].size)
            size += entries[r].size
            (<int64_t*>off_p)[r + 1] = size
            (<int64_t*>cnt_p)[r] = entries[r].count
    pretokens = pa.Array.from_buffers(pa.large_binary(), m, [None, pa.py_buffer(off), pa.py_buffer(val)])
    counts = pa.Array.from_buffers(pa.int64(), m, [None, pa.py_buffer(cnt)])
    stats = {"documents": documents, "null": nulls, "empty": empty, "bytes": total}
    return pretokens, counts, stats


# ---------------------------------------------------------------------------------------------------
# Pretokens per row, for the SQL function pretokenize(text) -> VARCHAR[]

def pretokenize_arrow(arr, script_aware: bool = True):
    """list<string> Array of the pretokens of each row of a pyarrow string array (NULL stays NULL)."""
    cdef StringColumn col
    keep = string_column(arr, &col)
    cdef bint aware = script_aware
    cdef int64_t r, a, b, total = 0, n_null = 0
    for r in range(col.length):
        if row_valid(&col, r):
            total += row_offset(&col, r + 1) - row_offset(&col, r)
    if total > 0x7FFFFFFF:
        raise ValueError("pretokenize_arrow: more than 2 GiB of text in one array")
    cdef char* data_p
    cdef char* list_p
    cdef char* valid_p = NULL
    data = bytes_of(total, &data_p)
    list_offsets = bytes_of((col.length + 1) * sizeof(int32_t), &list_p)
    validity = None
    if col.validity != NULL:
        validity = bytes_of((col.length + 7) // 8, &valid_p)
    cdef vector[int32_t] value_offsets
    cdef vector[int64_t] ends
    cdef size_t k
    cdef int64_t base = 0
    value_offsets.push_back(0)
    with nogil:
        for r in range(col.length):
            (<int32_t*>list_p)[r] = <int32_t>(value_offsets.size() - 1)
            if valid_p != NULL:
                if r % 8 == 0:
                    valid_p[r // 8] = 0
                if not row_valid(&col, r):
                    n_null += 1
                    continue
                valid_p[r // 8] |= <char>(1 << (r % 8))
            a = row_offset(&col, r)
            b = row_offset(&col, r + 1)
            memcpy(data_p + base, col.data + a, b - a)
            ends.clear()
            pretokenize_utf8(col.data + a, b - a, aware, ends)
            for k in range(ends.size()):
                value_offsets.push_back(<int32_t>(base + ends[k]))
            base += b - a
        (<int32_t*>list_p)[col.length] = <int32_t>(value_offsets.size() - 1)
    voff = PyBytes_FromStringAndSize(<const char*>value_offsets.data(),
                                     value_offsets.size() * sizeof(int32_t))
    values = pa.Array.from_buffers(pa.string(), value_offsets.size() - 1,
                                   [None, pa.py_buffer(voff), pa.py_buffer(data)])
    return pa.Array.from_buffers(pa.list_(pa.string()), col.length,
                                 [None if validity is None else pa.py_buffer(validity),
                                  pa.py_buffer(list_offsets)],
                                 null_count=n_null, children=[values])
