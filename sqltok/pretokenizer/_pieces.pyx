# cython: language_level=3
"""Long documents cut into pieces where the pretokenizer's output cannot change, so that counting
unnests short lists only (DuckDB's unnest of one huge list takes time quadratic in its length) and
a 1 GB document is counted in linear time, with the pretokens of the whole document.

A piece ends at the first cut point (`cut_points.pxd`) of its mode at or after every `max_bytes`
bytes: "pretokens", "candidates" or "lines" (SQL then splits each piece into lines). A document with
no cut point is one piece.
"""
from libc.stdint cimport int64_t, uint8_t
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from sqltok.pretokenizer.cut_points cimport CUT_CANDIDATES, CUT_LINES, CUT_PRETOKENS, cut_after, pattern_cuts

import pyarrow as pa
import pyarrow.compute as pc

from sqltok.pretokenizer._pretokenize import PATTERN_IDS

MODES = {"pretokens": CUT_PRETOKENS, "candidates": CUT_CANDIDATES, "lines": CUT_LINES}

def _cuts(int pattern) -> tuple[bool, bool]:
    """`pattern_cuts` of a pattern id."""
    cdef bint script_aware, newline_cuts
    if not pattern_cuts(pattern, &script_aware, &newline_cuts):
        raise ValueError(f"pattern id {pattern} has no cut points")
    return script_aware, newline_cuts


#: The pretokenizers counting can cut for ("pretokens" mode), by their `PATTERN_IDS` name: whether
#: the script-aware cuts apply, and whether cuts after a line feed do (see the module).
PRETOKEN_CUTS = {name: _cuts(pid) for name, pid in PATTERN_IDS.items()}


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
                    cut_after(v.values + start, at + max_bytes, n, m, script_aware, newline_cuts)
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
