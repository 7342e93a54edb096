# cython: language_level=3
"""Long documents cut into pieces where the pretokenizer's output cannot change, so that counting
unnests short lists only (DuckDB's unnest of one huge list takes time quadratic in its length) and
a 1 GB document is counted in linear time, with the pretokens of the whole document.

A piece ends at the first cut point at or after every `max_bytes` bytes. Cut points, at byte b:
- "pretokens": a single ASCII space between two ASCII letters ("x|y" below is text[b-1]|text[b]):
  "a| b" — a word ends before it, " b..." starts one, and both sides are in the same Latin run;
  or an ASCII letter right after a line feed ("\\n|a"): the pretoken holding the line feed ends
  there in the patterns whose whitespace rule takes a run up to its last line feed (GPT-4o's,
  cl100k's, Llama 3's, Qwen 2's; not GPT-2's, whose "\\s+(?!\\S)" leaves the last line feed of
  "\\n\\n|a" a pretoken of its own: `newline_cuts` is off for it); in script-aware mode only when
  the ASCII non-letters that end with the line feed follow an ASCII letter (or start the text), so
  that they are in the Latin run of the letter after them (after another script's run they would
  move into the next run, whereas a piece ending there keeps them: "中 \\u0301\\n|a" pretokenizes
  " \\u0301\\n" as one); in script-aware mode also between two Han letters ("中|文"), each its own
  pretoken there.
- "candidates": only after a line feed followed by an ASCII letter: the pretoken holding the line
  feed holds no letter, so no supermerge candidate (a run of letter tokens) crosses it.
- "lines": right after a line feed; SQL then splits each piece into lines.
A document with no cut point is one piece. tests/test_pieces.py checks with hypothesis that the
pieces' pretokens (and candidates, and lines) equal the whole document's.
"""
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from sqltok.pretokenizer.matcher cimport UC_L, next_char, uc_entry

import pyarrow as pa
import pyarrow.compute as pc

cdef enum:
    CUT_PRETOKENS = 0
    CUT_CANDIDATES = 1
    CUT_LINES = 2
    SC_HAN = 3      # unicode_tables.h: the first script-specific script


MODES = {"pretokens": CUT_PRETOKENS, "candidates": CUT_CANDIDATES, "lines": CUT_LINES}

#: The pretokenizers counting can cut for ("pretokens" mode), by their `PATTERN_IDS` name: whether
#: the script-aware cuts apply, and whether cuts after a line feed do (see the module).
PRETOKEN_CUTS = {"script_aware": (True, True), "o200k": (False, True), "cl100k": (False, True),
                 "llama3": (False, True), "qwen2": (False, True), "gpt2": (False, False)}


cdef inline bint _alpha(uint8_t c) noexcept nogil:
    return <uint8_t>((c | 0x20) - 97) < 26


cdef inline bint _han_letter_at(const uint8_t* s, int64_t i, int64_t n) noexcept nogil:
    """Whether a Han letter starts at byte i (a lead byte of a 3- or 4-byte character)."""
    cdef uint32_t cp
    if s[i] < 0xE0:
        return False
    next_char(s, i, n, &cp)
    cdef uint16_t e = uc_entry(cp)
    return (e >> 8) == SC_HAN and (e & UC_L) != 0


cdef inline bint _latin_before(const uint8_t* s, int64_t b) noexcept nogil:
    """Whether the ASCII non-letters ending at byte b follow an ASCII letter or the start of the text
    (looking back 64 bytes at most): then they are in the Latin run of what follows them."""
    cdef int64_t k = b
    while k >= 0 and b - k < 64 and s[k] < 0x80 and not _alpha(s[k]):
        k -= 1
    return k < 0 or (b - k < 64 and _alpha(s[k]))


cdef inline bint _cut_at(const uint8_t* s, int64_t b, int64_t n, int mode, bint script_aware,
                         bint newline_cuts) noexcept nogil:
    """Whether the text s[:n] may be cut before byte b (0 < b < n)."""
    cdef uint8_t c = s[b], before = s[b - 1]
    cdef int64_t k
    if mode == CUT_LINES:
        return before == 10
    if before == 10:  # script-aware: the line feed must not trail another script's run (see above)
        return newline_cuts and _alpha(c) and (not script_aware or _latin_before(s, b - 1))
    if mode == CUT_CANDIDATES:
        return False
    if c == 32:
        return b + 1 < n and _alpha(s[b + 1]) and _alpha(before)
    if script_aware and c >= 0xE0 and before >= 0x80 and _han_letter_at(s, b, n):
        k = b - 1
        while k > 0 and b - k < 4 and (s[k] & 0xC0) == 0x80:
            k -= 1
        return _han_letter_at(s, k, n)
    return False


cdef int64_t _cut_after(const uint8_t* s, int64_t start, int64_t n, int mode, bint script_aware,
                        bint newline_cuts) noexcept nogil:
    """The first cut point at or after `start`, or n."""
    cdef int64_t b = start if start > 0 else 1
    while b < n:
        if _cut_at(s, b, n, mode, script_aware, newline_cuts):
            return b
        b += 1
    return n


cdef int64_t _longest_line(const uint8_t* s, int64_t n) noexcept nogil:
    """The length of the longest line of s[:n] (line feeds not counted)."""
    cdef int64_t i, start = 0, longest = 0
    for i in range(n):
        if s[i] == 10:
            longest = max(longest, i - start)
            start = i + 1
    return max(longest, n - start)


def pieces_arrow(texts, str mode="pretokens", bint script_aware=True, int64_t max_bytes=1 << 16,
                 int64_t max_piece_bytes=-1, bint newline_cuts=True):
    """Each text as a list of pieces (large_list<large_string>; NULL stays NULL) that share the
    input's bytes. `mode`: "pretokens", "candidates" or "lines" (see the module); `newline_cuts`
    False: no cut after a line feed (pretokens of the GPT-2 pattern). With
    `max_piece_bytes` >= 0, a piece longer than that (in "lines" mode: one line) is a ValueError
    naming the row."""
    if mode not in MODES:
        raise ValueError(f"pieces_arrow: mode must be one of {sorted(MODES)}, not {mode!r}")
    cdef int m = MODES[mode]
    cdef list keep = []
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not (pa.types.is_large_string(texts.type) or pa.types.is_string(texts.type)):
        texts = texts.cast(pa.large_string())
    cdef BinaryView v = binary_view(texts, keep)
    # Piece k is values[starts[k]:starts[k + 1]]: a row's pieces tile its bytes and rows follow each
    # other in the buffer (row r ends where row r + 1 starts), so one list of starts says it all. A
    # NULL row gets one element, its own bytes, under its NULL list.
    cdef vector[int64_t] starts
    cdef vector[int64_t] firsts        # each row's first piece
    cdef int64_t r, start, n, at, cut, too_long = -1
    with nogil:
        for r in range(v.length):
            firsts.push_back(<int64_t>starts.size())
            start = view_start(v, r)
            if not view_valid(v, r):
                starts.push_back(start)
                continue
            n = view_end(v, r) - start
            at = 0
            while True:
                cut = n if n - at <= max_bytes else \
                    _cut_after(v.values + start, at + max_bytes, n, m, script_aware, newline_cuts)
                if max_piece_bytes >= 0 and cut - at > max_piece_bytes and too_long < 0 and \
                        (m != CUT_LINES or _longest_line(v.values + start + at, cut - at) > max_piece_bytes):
                    too_long = r
                starts.push_back(start + at)
                at = cut
                if at >= n:
                    break
        firsts.push_back(<int64_t>starts.size())
        starts.push_back(view_end(v, v.length - 1) if v.length else 0)
    if too_long >= 0:
        what = "line" if m == CUT_LINES else "piece"
        raise ValueError(f"row {too_long}: a {what} longer than {max_piece_bytes:,} bytes")
    offsets = pa.py_buffer(bytes(<char[:starts.size() * 8]><char*>starts.data()))
    values = pa.Array.from_buffers(pa.large_string(), starts.size() - 1, [None, offsets, keep[2]])
    lists = pa.py_buffer(bytes(<char[:firsts.size() * 8]><char*>firsts.data()))
    validity = pc.is_valid(texts).buffers()[1] if texts.null_count else None
    return pa.Array.from_buffers(pa.large_list(pa.large_string()), len(texts), [validity, lists],
                                 null_count=texts.null_count, children=[values])
