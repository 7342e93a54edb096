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
resolved by forward scans (see `word_end` in pretokenize.pxd, the C core other modules cimport).
`(?i:...)` folds exactly the ASCII letters and U+017F LONG S (onto `s`), as `regex` does.

Script-aware mode (the reference's `Pretokenizer.pretokenize`, default) cuts the text into
single-script runs by the Unicode Script property and matches each run as its own string:
- Common/Unknown characters never start a run; leading ones join the first real run;
- a new real script ends the current run right after its last non-Common/Unknown character, so
  trailing Common characters move into the next run;
- Inherited characters count as characters of the current run, so an Inherited character after
  trailing Common ones keeps them in the current run ("a. \\u0301б" -> runs "a. \\u0301" | "б",
  pretokens "a", ".", " \\u0301", "б"); before the first real script they lead like Common ones;
- runs of Han, Hiragana, Katakana, Thai, Myanmar, Khmer and Lao use the script-specific pattern,
  all others (and a text without a real script) the main pattern.
Input must be valid UTF-8 (other bytes are never read out of bounds, but split arbitrarily).

Other tokenizers' patterns: every function takes `pattern=` a pattern id (`PATTERN_IDS`; `PATTERNS`
and `pattern_id` map the exact pattern strings of tiktoken and HF tokenizer.json files to ids), which
overrides `script_aware`. Their semantics are worked out in pretokenize.pxd ("Other tokenizers'
patterns"); each equals `regex.findall` of its pattern (cl100k's `$` read as the end of the text).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector

from arrow_buffers cimport binary_offsets_and_data, buffer_address
from pretokenize cimport (N_PATTERNS, PAT_CL100K, PAT_GPT2, PAT_LLAMA3, PAT_O200K, PAT_QWEN2,
                         PAT_SCRIPT_AWARE, SC_COUNT, SC_NAMES, UC_LL, UC_LM, UC_LO, UC_LT, UC_LU, UC_M,
                         UC_N, UC_WS, pretokenize_pattern, uc_entry)

import pyarrow as pa

from sqltok import patterns

#: Unicode version of the character tables.
UNICODE_VERSION = "17.0.0"
#: Class bits of a table entry (see `unicode_table`); \\s is White_Space.
CLASS_BITS = {"Lu": UC_LU, "Ll": UC_LL, "Lt": UC_LT, "Lm": UC_LM, "Lo": UC_LO, "M": UC_M, "N": UC_N,
              "s": UC_WS}

# ---------------------------------------------------------------------------------------------------
# Pattern ids

#: Pattern id of every family (the PAT_* constants of pretokenize.pxd).
PATTERN_IDS = {"o200k": PAT_O200K, "script_aware": PAT_SCRIPT_AWARE, "cl100k": PAT_CL100K,
               "llama3": PAT_LLAMA3, "qwen2": PAT_QWEN2, "gpt2": PAT_GPT2}


#: Exact pattern strings (tiktoken `pat_str`, HF tokenizer.json Split regex) -> pattern id.
PATTERNS: dict[str, int] = {
    patterns.O200K: PAT_O200K,      # tiktoken o200k_base; HF tokenizer.json of its conversion
    patterns.CL100K: PAT_CL100K,    # tiktoken cl100k_base
    patterns.LLAMA3: PAT_LLAMA3,    # HF: Llama 3 and the cl100k_base conversion
    patterns.QWEN2: PAT_QWEN2,      # HF: Qwen 2 / 2.5 / 3
    patterns.GPT2: PAT_GPT2,        # GPT-2, Whisper, HF ByteLevel(use_regex=True)
    patterns.R50K: PAT_GPT2,        # tiktoken r50k/p50k: the same split, possessive quantifiers
}


def pattern_id(pat: str) -> int | None:
    """The pattern id of an exact pattern string (see `PATTERNS`), or None when it has no matcher."""
    return PATTERNS.get(pat)


cdef int resolve_pattern(object script_aware, object pattern) except -1:
    """The pattern id that `script_aware` and an optional `pattern` id select."""
    if pattern is None:
        return PAT_SCRIPT_AWARE if script_aware else PAT_O200K
    pid = -1
    if not isinstance(pattern, bool) and hasattr(type(pattern), "__index__"):  # int, numpy integers
        pid = pattern.__index__()
    if not 0 <= pid < N_PATTERNS:
        raise ValueError(f"pattern must be a pattern id (PATTERN_IDS), not {pattern!r}")
    return pid


# ---------------------------------------------------------------------------------------------------
# Python API

def pretokenize(text: str, script_aware: bool = True, *, pattern: "int | None" = None) -> list[str]:
    """Pretokens of `text`, as the reference pretokenizer gives them.

    script_aware=False is the reference's simple mode: the main pattern over the whole text.
    pattern: a pattern id (PATTERN_IDS, pattern_id) to use instead.
    """
    cdef int pat = resolve_pattern(script_aware, pattern)
    data = text.encode("utf-8")
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = len(data)
    cdef vector[int64_t] ends
    cdef int64_t start = 0, end
    with nogil:
        pretokenize_pattern(s, n, pat, ends)
    out = []
    for end in ends:
        out.append(PyUnicode_DecodeUTF8(<const char*>s + start, end - start, NULL))
        start = end
    return out


def unicode_table() -> tuple[list[int], tuple[str, ...]]:
    """The table entry of every code point (class bits | script code << 8) and the name of every
    script code, for tests and inspection."""
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
# Counting pretokens: an open-addressing map over byte slices of the input. A slot holds the key's
# first 8 bytes, so most lookups touch one cache line (keys up to 8 bytes never leave the table).

cdef struct Slot:
    uint64_t head  # the key's first min(size, 8) bytes, little-endian, zero-padded
    const unsigned char* key  # into the input buffer
    int64_t size
    int64_t count  # 0: empty slot


cdef inline uint64_t load64(const unsigned char* p) noexcept nogil:
    cdef uint64_t w
    memcpy(&w, p, 8)
    return w


cdef inline uint64_t load32(const unsigned char* p) noexcept nogil:
    cdef uint32_t w
    memcpy(&w, p, 4)
    return w


cdef inline uint64_t head_word(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The first min(n, 8) bytes of p as a zero-padded little-endian word, never reading p[n:]."""
    if n >= 8:
        return load64(p)
    if n >= 4:
        return load32(p) | (load32(p + n - 4) << (8 * (n - 4)))
    return (<uint64_t>p[0] | (<uint64_t>p[n >> 1] << (8 * (n >> 1)))
            | (<uint64_t>p[n - 1] << (8 * (n - 1))))


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # splitmix64 finalizer
    h ^= h >> 30
    h *= <uint64_t>0xBF58476D1CE4E5B9ULL
    h ^= h >> 27
    h *= <uint64_t>0x94D049BB133111EBULL
    return h ^ (h >> 31)


cdef inline uint64_t hash_key(const unsigned char* p, Py_ssize_t n, uint64_t head) noexcept nogil:
    cdef uint64_t h = mix(head ^ (<uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL))
    while n > 8:
        p += 8
        n -= 8
        h = mix(h ^ head_word(p, n))
    return h


cdef inline bint same_tail(const unsigned char* a, const unsigned char* b, Py_ssize_t n) noexcept nogil:
    """a[8:n] == b[8:n] (the heads are already equal)."""
    while n > 8:
        a += 8
        b += 8
        n -= 8
        if head_word(a, n) != head_word(b, n):
            return False
    return True


cdef inline Slot* find_slot(vector[Slot]& slots, const unsigned char* key, int64_t size,
                            uint64_t head) noexcept nogil:
    """The slot holding key[:size], or the empty slot where it belongs."""
    cdef uint64_t mask = slots.size() - 1, j = hash_key(key, size, head) & mask
    cdef Slot* slot
    while True:
        slot = &slots[j]
        if slot.count == 0 or (slot.head == head and slot.size == size
                               and same_tail(slot.key, key, size)):
            return slot
        j = (j + 1) & mask


cdef int grow(vector[Slot]& slots) except -1 nogil:
    """Double the table."""
    cdef vector[Slot] old
    cdef size_t i
    old.swap(slots)
    slots.resize(2 * old.size())
    for i in range(old.size()):
        if old[i].count:
            find_slot(slots, old[i].key, old[i].size, old[i].head)[0] = old[i]
    return 0


cdef inline int count_add(vector[Slot]& slots, int64_t* used, const unsigned char* key,
                          int64_t size) except -1 nogil:
    """Count one occurrence of the byte slice key[:size]."""
    cdef uint64_t head = head_word(key, size)
    cdef Slot* slot = find_slot(slots, key, size, head)
    if slot.count:
        slot.count += 1
        return 0
    slot[0] = Slot(head, key, size, 1)
    used[0] += 1
    if 2 * used[0] > <int64_t>slots.size():
        grow(slots)
    return 0


cdef int count_rows(const StringColumn* col, int pattern, vector[Slot]& slots,
                    int64_t* stats) except -1 nogil:
    """Count the pretokens of every row; stats gets documents, NULL, empty, bytes of documents and
    distinct pretokens."""
    cdef vector[int64_t] ends
    cdef int64_t r, a, b, start
    cdef size_t k
    for r in range(col.length):
        if not row_valid(col, r):
            stats[1] += 1
            continue
        a = row_offset(col, r)
        b = row_offset(col, r + 1)
        if a == b:
            stats[2] += 1
            continue
        stats[0] += 1
        stats[3] += b - a
        ends.clear()
        pretokenize_pattern(col.data + a, b - a, pattern, ends)
        start = 0
        for k in range(ends.size()):
            count_add(slots, &stats[4], col.data + a + start, ends[k] - start)
            start = ends[k]
    return 0


cdef object bytes_of(size_t size, char** data):
    """A new bytes object of `size` bytes to fill through `data` before anyone else sees it."""
    out = PyBytes_FromStringAndSize(NULL, size)
    data[0] = PyBytes_AS_STRING(out)
    return out


cdef tuple slots_to_arrow(const vector[Slot]& slots, int64_t m):
    """(large_binary pretokens, int64 counts) of the m used slots, built from one offsets, one values
    and one counts buffer."""
    cdef int64_t i, size = 0
    cdef size_t j
    cdef char* offsets_p
    cdef char* values_p
    cdef char* counts_p
    for j in range(slots.size()):
        size += slots[j].size
    offsets = bytes_of((m + 1) * sizeof(int64_t), &offsets_p)
    values = bytes_of(size, &values_p)
    counts = bytes_of(m * sizeof(int64_t), &counts_p)
    with nogil:
        size = 0
        i = 0
        (<int64_t*>offsets_p)[0] = 0
        for j in range(slots.size()):
            if slots[j].count:
                memcpy(values_p + size, slots[j].key, slots[j].size)
                size += slots[j].size
                (<int64_t*>offsets_p)[i + 1] = size
                (<int64_t*>counts_p)[i] = slots[j].count
                i += 1
    return (pa.Array.from_buffers(pa.large_binary(), m,
                                  [None, pa.py_buffer(offsets), pa.py_buffer(values)]),
            pa.Array.from_buffers(pa.int64(), m, [None, pa.py_buffer(counts)]))


def count_pretokens(arr: "pa.Array", script_aware: bool = True, *,
                    pattern: "int | None" = None) -> "tuple[pa.Array, pa.Array, dict]":
    """Count the pretokens of a batch of documents, without a Python object per pretoken.

    arr: pyarrow (large_)string or string_view array (or ChunkedArray); NULL and empty documents
    are skipped and counted. Returns the distinct pretokens (large_binary, in no particular order),
    their counts (int64) and {"documents", "null", "empty", "bytes"} (bytes of the documents).
    pattern: a pattern id, as for `pretokenize`.
    """
    cdef int pat = resolve_pattern(script_aware, pattern)
    cdef StringColumn col
    keep = string_column(arr, &col)
    cdef vector[Slot] slots
    cdef int64_t stats[5]
    cdef size_t capacity = 1 << 12
    if col.length:  # start at about one slot per 128 bytes (English has a distinct pretoken per ~90)
        while capacity < <size_t>(row_offset(&col, col.length) - row_offset(&col, 0)) // 128:
            capacity *= 2
    slots.resize(capacity)
    stats[:] = [0, 0, 0, 0, 0]
    with nogil:
        count_rows(&col, pat, slots, stats)
    pretokens, counts = slots_to_arrow(slots, stats[4])
    return pretokens, counts, {"documents": stats[0], "null": stats[1], "empty": stats[2],
                               "bytes": stats[3]}


# ---------------------------------------------------------------------------------------------------
# Pretokens per row, for the SQL function pretokenize(text) -> VARCHAR[]

cdef int split_rows(const StringColumn* col, int pattern, char* data, int32_t* list_offsets,
                    uint8_t* validity, vector[int32_t]& value_offsets) except -1 nogil:
    """Copy the bytes of the non-NULL rows to `data` and record their pretokens: value_offsets gets
    where each pretoken ends in `data`, list_offsets where each row's pretokens start (and end),
    validity (when not NULL) a bit per row."""
    cdef vector[int64_t] ends
    cdef int64_t r, a, b, base = 0
    cdef size_t k
    for r in range(col.length):
        list_offsets[r] = <int32_t>(value_offsets.size() - 1)
        if not row_valid(col, r):
            continue
        if validity != NULL:
            validity[r >> 3] |= 1 << (r & 7)
        a = row_offset(col, r)
        b = row_offset(col, r + 1)
        memcpy(data + base, col.data + a, b - a)
        ends.clear()
        pretokenize_pattern(col.data + a, b - a, pattern, ends)
        for k in range(ends.size()):
            value_offsets.push_back(<int32_t>(base + ends[k]))
        base += b - a
    list_offsets[col.length] = <int32_t>(value_offsets.size() - 1)
    return 0


def pretokenize_arrow(arr: "pa.Array", script_aware: bool = True, *,
                      pattern: "int | None" = None) -> "pa.ListArray":
    """The pretokens of every row (list<string>; NULL stays NULL) of a pyarrow string array, as
    `count_pretokens` accepts it: the SQL function pretokenize(text) -> VARCHAR[].
    pattern: a pattern id, as for `pretokenize`."""
    cdef int pat = resolve_pattern(script_aware, pattern)
    cdef StringColumn col
    keep = string_column(arr, &col)
    cdef int64_t r, total = 0
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
        memset(valid_p, 0, (col.length + 7) // 8)
    cdef vector[int32_t] value_offsets
    value_offsets.push_back(0)
    with nogil:
        split_rows(&col, pat, data_p, <int32_t*>list_p, <uint8_t*>valid_p, value_offsets)
    voff = PyBytes_FromStringAndSize(<const char*>value_offsets.data(),
                                     value_offsets.size() * sizeof(int32_t))
    values = pa.Array.from_buffers(pa.string(), value_offsets.size() - 1,
                                   [None, pa.py_buffer(voff), pa.py_buffer(data)])
    return pa.Array.from_buffers(pa.list_(pa.string()), col.length,
                                 [None if validity is None else pa.py_buffer(validity),
                                  pa.py_buffer(list_offsets)],
                                 null_count=keep.null_count, children=[values])
