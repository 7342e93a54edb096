# cython: language_level=3
"""Cut points: where a text may be cut without changing what the pretokenizer (or the supermerge
candidate finder) makes of it, so that long documents are handled in pieces of bounded size
(`_pieces.pieces_arrow` for SQL, the counting kernel `_batch_counts` inside one call).

Cut points, at byte b ("x|y" below is text[b-1]|text[b]):
- CUT_PRETOKENS: a single ASCII space between two ASCII letters: "a| b" — a word ends before it,
  " b..." starts one, and both sides are in the same Latin run;
  or an ASCII letter right after a line feed ("\\n|a"): the pretoken holding the line feed ends
  there in the patterns whose whitespace rule takes a run up to its last line feed (GPT-4o's,
  cl100k's, Llama 3's, Qwen 2's, Tekken's; not GPT-2's, whose "\\s+(?!\\S)" leaves the last line feed of
  "\\n\\n|a" a pretoken of its own: `newline_cuts` is off for it); in script-aware mode only when
  the ASCII non-letters that end with the line feed follow an ASCII letter (or start the text), so
  that they are in the Latin run of the letter after them (after another script's run they would
  move into the next run, whereas a piece ending there keeps them: "中 \\u0301\\n|a" pretokenizes
  " \\u0301\\n" as one); in script-aware mode also between two Han letters ("中|文"), each its own
  pretoken there.
- CUT_CANDIDATES: only after a line feed followed by an ASCII letter: the pretoken holding the line
  feed holds no letter, so no supermerge candidate (a run of letter tokens) crosses it.
- CUT_LINES: right after a line feed.
tests/test_pieces.py checks with hypothesis that the pieces' pretokens (and candidates, and lines)
equal the whole document's.
"""
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t

from sqltok.pretokenizer.matcher cimport (PAT_CL100K, PAT_GPT2, PAT_LLAMA3, PAT_O200K, PAT_QWEN2, PAT_SCRIPT_AWARE,
                                          PAT_TEKKEN, UC_L, next_char, uc_entry)

cdef enum:
    CUT_PRETOKENS = 0
    CUT_CANDIDATES = 1
    CUT_LINES = 2
    SC_HAN = 3      # unicode_tables.h: the first script-specific script


cdef inline bint ascii_alpha(uint8_t c) noexcept nogil:
    return <uint8_t>((c | 0x20) - 97) < 26


cdef inline bint han_letter_at(const uint8_t* s, int64_t i, int64_t n) noexcept nogil:
    """Whether a Han letter starts at byte i (a lead byte of a 3- or 4-byte character)."""
    cdef uint32_t cp
    if s[i] < 0xE0:
        return False
    next_char(s, i, n, &cp)
    cdef uint16_t e = uc_entry(cp)
    return (e >> 8) == SC_HAN and (e & UC_L) != 0


cdef inline bint latin_before(const uint8_t* s, int64_t b) noexcept nogil:
    """Whether the ASCII non-letters ending at byte b follow an ASCII letter or the start of the text
    (looking back 64 bytes at most): then they are in the Latin run of what follows them."""
    cdef int64_t k = b
    while k >= 0 and b - k < 64 and s[k] < 0x80 and not ascii_alpha(s[k]):
        k -= 1
    return k < 0 or (b - k < 64 and ascii_alpha(s[k]))


cdef inline bint cut_at(const uint8_t* s, int64_t b, int64_t n, int mode, bint script_aware,
                        bint newline_cuts) noexcept nogil:
    """Whether the text s[:n] may be cut before byte b (0 < b < n)."""
    cdef uint8_t c = s[b], before = s[b - 1]
    cdef int64_t k
    if mode == CUT_LINES:
        return before == 10
    if before == 10:  # script-aware: the line feed must not trail another script's run (see above)
        return newline_cuts and ascii_alpha(c) and (not script_aware or latin_before(s, b - 1))
    if mode == CUT_CANDIDATES:
        return False
    if c == 32:
        return b + 1 < n and ascii_alpha(s[b + 1]) and ascii_alpha(before)
    if script_aware and c >= 0xE0 and before >= 0x80 and han_letter_at(s, b, n):
        k = b - 1
        while k > 0 and b - k < 4 and (s[k] & 0xC0) == 0x80:
            k -= 1
        return han_letter_at(s, k, n)
    return False


cdef inline bint pattern_cuts(int pattern, bint* script_aware, bint* newline_cuts) noexcept nogil:
    """The cut points of pattern id `pattern` (PAT_*): whether the script-aware ones apply and whether
    cuts after a line feed do; False for an id without cut points."""
    script_aware[0] = pattern == PAT_SCRIPT_AWARE
    newline_cuts[0] = pattern != PAT_GPT2
    return pattern in (PAT_O200K, PAT_SCRIPT_AWARE, PAT_CL100K, PAT_LLAMA3, PAT_QWEN2, PAT_GPT2, PAT_TEKKEN)


cdef inline int64_t cut_after(const uint8_t* s, int64_t start, int64_t n, int mode, bint script_aware,
                               bint newline_cuts) noexcept nogil:
    """The first cut point at or after `start`, or n."""
    cdef int64_t b = start if start > 0 else 1
    while b < n:
        if cut_at(s, b, n, mode, script_aware, newline_cuts):
            return b
        b += 1
    return n
