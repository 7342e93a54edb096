# cython: language_level=3
"""Pretokenization: the GPT-4o pattern (and its script-specific variant), exactly as `regex.findall`.

A hand-written, linear-time matcher over UTF-8 replaces the regex engine. Patterns (as the reference
implementation writes them; `patterns.py` holds the exact strings):

    main:     [^\\r\\n\\p{L}\\p{N}]?[UPPERISH]*[LOWERISH]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
            | [^\\r\\n\\p{L}\\p{N}]?[UPPERISH]+[LOWERISH]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
            | REST
    specific: ` ?\\p{L}\\p{M}*` | REST
    REST:     \\p{N}{1,3} | ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*` | \\s*[\\r\\n]+ | \\s+(?!\\S) | \\s+

with UPPERISH = [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}], LOWERISH = [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}] and \\s the
Unicode White_Space property (what `regex` means by \\s). Every character is matched by some branch,
so the pretokens tile the text and the matcher only reports where each one ends. Backtracking is
resolved by forward scans (see `word_end` in matcher.pxd, the C core other modules cimport).
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
overrides `script_aware`. Their semantics are worked out in matcher.pxd ("Other tokenizers'
patterns"); each equals `regex.findall` of its pattern (cl100k's `$` read as the end of the text).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_array, view_end, view_start, view_valid
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.pretokenizer.matcher cimport (N_PATTERNS, PAT_CL100K, PAT_GPT2, PAT_LLAMA3, PAT_O200K, PAT_QWEN2,
                         PAT_SCRIPT_AWARE, PAT_TEKKEN, SC_COUNT, SC_NAMES, UC_LL, UC_LM, UC_LO, UC_LT, UC_LU, UC_M,
                         UC_N, UC_WS, pretokenize_pattern, uc_entry)

import pyarrow as pa
import pyarrow.compute

from sqltok.pretokenizer import patterns

#: Unicode version of the character tables.
UNICODE_VERSION = "17.0.0"
#: Class bits of a table entry (see `unicode_table`); \\s is White_Space.
CLASS_BITS = {"Lu": UC_LU, "Ll": UC_LL, "Lt": UC_LT, "Lm": UC_LM, "Lo": UC_LO, "M": UC_M, "N": UC_N,
              "s": UC_WS}

# ---------------------------------------------------------------------------------------------------
# Pattern ids

#: Pattern id of every family (the PAT_* constants of pretokenize.pxd).
PATTERN_IDS = {"o200k": PAT_O200K, "script_aware": PAT_SCRIPT_AWARE, "cl100k": PAT_CL100K,
               "llama3": PAT_LLAMA3, "qwen2": PAT_QWEN2, "gpt2": PAT_GPT2, "tekken": PAT_TEKKEN}


#: Exact pattern strings (tiktoken `pat_str`, HF tokenizer.json Split regex) -> pattern id.
PATTERNS: dict[str, int] = {
    patterns.O200K: PAT_O200K,      # tiktoken o200k_base; HF tokenizer.json of its conversion
    patterns.CL100K: PAT_CL100K,    # tiktoken cl100k_base
    patterns.LLAMA3: PAT_LLAMA3,    # HF: Llama 3 and the cl100k_base conversion
    patterns.QWEN2: PAT_QWEN2,      # HF: Qwen 2 / 2.5 / 3
    patterns.GPT2: PAT_GPT2,        # GPT-2, Whisper, HF ByteLevel(use_regex=True)
    patterns.R50K: PAT_GPT2,        # tiktoken r50k/p50k: the same split, possessive quantifiers
    patterns.TEKKEN: PAT_TEKKEN,    # Mistral's Tekken (tekken_*.json)
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


# ---------------------------------------------------------------------------------------------------
# Pretokens per row, for the SQL function pretokenize(text) -> VARCHAR[]

cdef int split_rows(const BinaryView& v, int pattern, int32_t* list_offsets,
                    vector[int32_t]& value_offsets) except -1 nogil:
    """Record the pretokens of every row as offsets into the input's values buffer (the pretokens are
    views of the input, not copies): value_offsets gets where each one ends, list_offsets where each
    row's pretokens start (and end). Bytes of a NULL row (Arrow allows them) become one element of
    its NULL list, so the elements stay contiguous."""
    cdef vector[int64_t] ends
    cdef int64_t r, a, b
    cdef size_t k
    value_offsets.push_back(<int32_t>(view_start(v, 0) if v.length else 0))
    for r in range(v.length):
        list_offsets[r] = <int32_t>(value_offsets.size() - 1)
        a = view_start(v, r)
        b = view_end(v, r)
        if not view_valid(v, r):
            if b > a:
                value_offsets.push_back(<int32_t>b)
            continue
        ends.clear()
        pretokenize_pattern(v.values + a, b - a, pattern, ends)
        for k in range(ends.size()):
            value_offsets.push_back(<int32_t>(a + ends[k]))
    list_offsets[v.length] = <int32_t>(value_offsets.size() - 1)
    return 0


cdef struct CountsTask:             # one call's pattern and output
    int pattern
    int64_t* counts


cdef int64_t count_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                        int64_t last) noexcept nogil:
    """Count the pretokens of rows first..last-1 (see `pretoken_counts_arrow`)."""
    cdef CountsTask* t = <CountsTask*>task
    cdef int64_t r, a
    for r in range(first, last):
        if view_valid(run.view, r):
            a = view_start(run.view, r)
            pretokenize_pattern(run.view.values + a, view_end(run.view, r) - a, t.pattern, t.counts[r])
    return -1


def pretoken_counts_arrow(arr: "pa.Array", script_aware: bool = True, *,
                          pattern: "int | None" = None, int threads=1) -> "pa.Int64Array":
    """How many pretokens each row holds (int64; NULL stays NULL): the list lengths of
    `pretokenize_arrow` (same arguments), without recording where each pretoken is; the rows shared
    among up to `threads` threads."""
    cdef CountsTask task
    task.pattern = resolve_pattern(script_aware, pattern)
    cdef list keep = []
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    cdef RowRun run
    rows_open(run, arr, keep, threads, False)
    cdef vector[int64_t] counts
    counts.resize(run.view.length)
    if run.view.length:
        task.counts = counts.data()
        rows_run(run, count_rows, NULL, &task)
    src = keep[0]
    validity = pa.compute.is_valid(src).buffers()[1] if src.null_count else None
    return pa.Array.from_buffers(pa.int64(), run.view.length, [validity, int64_array(counts).buffers()[1]],
                                 null_count=src.null_count)


def pretokenize_arrow(arr: "pa.Array", script_aware: bool = True, *,
                      pattern: "int | None" = None) -> "pa.ListArray":
    """The pretokens of every row (list<string>; NULL stays NULL) of a pyarrow (large_)string or
    string_view array (or ChunkedArray): the SQL function pretokenize(text) -> VARCHAR[].
    The pretokens share the input's bytes. pattern: a pattern id, as for `pretokenize`."""
    cdef int pat = resolve_pattern(script_aware, pattern)
    cdef list keep = []
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    cdef BinaryView v = binary_view(arr, keep)
    src, values_buf = keep[0], keep[2]
    if v.length and view_end(v, v.length - 1) > 0x7FFFFFFF:
        raise ValueError("pretokenize_arrow: more than 2 GiB of text in one array")
    list_offsets = PyBytes_FromStringAndSize(NULL, (v.length + 1) * sizeof(int32_t))
    cdef int32_t* list_p = <int32_t*>PyBytes_AS_STRING(list_offsets)
    cdef vector[int32_t] value_offsets
    with nogil:
        split_rows(v, pat, list_p, value_offsets)
    voff = PyBytes_FromStringAndSize(<const char*>value_offsets.data(),
                                     value_offsets.size() * sizeof(int32_t))
    values = pa.Array.from_buffers(pa.string(), value_offsets.size() - 1,
                                   [None, pa.py_buffer(voff), values_buf])
    validity = pa.compute.is_valid(src).buffers()[1] if src.null_count else None
    return pa.Array.from_buffers(pa.list_(pa.string()), v.length, [validity, pa.py_buffer(list_offsets)],
                                 null_count=src.null_count, children=[values])
