# cython: language_level=3
"""The pretokenizer's C core, header-only (every function inline), so that any Cython module can
`from pretokenize cimport pretokenize_utf8` without importing `sqltok._pretokenize` at run time.

Semantics are documented in pretokenize.pyx. The matcher never backtracks: each branch of the
patterns is resolved by one forward scan (see `word_end`, `whitespace_end`), so the time is linear.
ASCII text under the main pattern goes 64 bytes at a time instead: byte classes as bit masks (SSE2),
pretoken starts from them with a few bit operations per window (o200k_ascii.h; cl100k_ascii.h and
gpt2_ascii.h for the other patterns below).

`pretokenize_pattern` selects by id the pattern of another tokenizer family (cl100k, Llama 3,
Qwen 2, GPT-2; see "Other tokenizers' patterns" below), each equal to `regex.findall` too.
"""
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from sqltok.native.portable cimport ctz64, le64, msb64, popcount64


cdef extern from "unicode_tables.h" nogil:
    # Class bits (low byte) and script code (high byte) of every code point; Unicode 17.0.0.
    const int UC_LU, UC_LL, UC_LT, UC_LM, UC_LO, UC_M, UC_N, UC_WS
    const int UC_L, UC_UPPERISH, UC_LOWERISH
    const int SC_UNKNOWN, SC_COMMON, SC_INHERITED, SC_FIRST_SPECIFIC, SC_LAST_SPECIFIC, SC_COUNT
    const char* const SC_NAMES[]
    uint16_t uc_entry(uint32_t cp)


cdef extern from "o200k_ascii.h" nogil:
    uint64_t o200k_ascii_starts "sqltok_o200k_ascii_starts"(const unsigned char* s, size_t base, size_t n)
    uint64_t tekken_ascii_starts "sqltok_tekken_ascii_starts"(const unsigned char* s, size_t base, size_t n)


cdef extern from "cl100k_ascii.h" nogil:
    uint64_t cl100k_ascii_starts "sqltok_cl100k_ascii_starts"(const unsigned char* s, size_t base, size_t n,
                                                              int three_digits, int whole_at_end)


cdef extern from "gpt2_ascii.h" nogil:
    uint64_t gpt2_ascii_starts "sqltok_gpt2_ascii_starts"(const unsigned char* s, size_t base, size_t n)


cdef enum:
    LF = 10
    CR = 13
    SPACE = 32
    APOSTROPHE = 39
    SLASH = 47


# Where the matcher puts the pretokens it finds: the end of each (a vector) or only how many (a count)
ctypedef fused Pretokens:
    vector[int64_t]
    int64_t


cdef inline void found(Pretokens& out, int64_t end) noexcept nogil:
    if Pretokens is int64_t:
        out += 1
    else:
        out.push_back(end)


# pattern ids (see pretokenize_pattern)
cdef enum:
    PAT_O200K = 0  # the GPT-4o (o200k_base) pattern over the whole text (script_aware=False)
    PAT_SCRIPT_AWARE = 1  # the same per script run, Han & co. with the script-specific pattern
    PAT_CL100K = 2  # tiktoken cl100k_base
    PAT_LLAMA3 = 3  # HF tokenizer.json of Llama 3 (and of the cl100k_base conversion)
    PAT_QWEN2 = 4  # HF tokenizer.json of Qwen 2 / 2.5 / 3
    PAT_GPT2 = 5  # GPT-2: tiktoken r50k_base / p50k_base, whisper, HF ByteLevel(use_regex=True)
    PAT_TEKKEN = 6  # Mistral's Tekken: PAT_O200K without contractions, one digit per pretoken
    N_PATTERNS = 7


# ---------------------------------------------------------------------------------------------------
# Matching one run

cdef inline Py_ssize_t next_char(const unsigned char* s, Py_ssize_t i, Py_ssize_t n,
                                 uint32_t* cp) noexcept nogil:
    """Decode the code point at byte i into cp; return the offset of the next one."""
    cdef uint32_t b = s[i]
    if b < 0x80:
        cp[0] = b
        return i + 1
    if b < 0xE0:
        if i + 2 > n:
            cp[0] = 0xFFFD
            return n
        cp[0] = ((b & 0x1F) << 6) | (s[i + 1] & 0x3F)
        return i + 2
    if b < 0xF0:
        if i + 3 > n:
            cp[0] = 0xFFFD
            return n
        cp[0] = ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
        return i + 3
    if i + 4 > n:
        cp[0] = 0xFFFD
        return n
    b = ((b & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
    cp[0] = b if b <= 0x10FFFF else 0xFFFD
    return i + 4


cdef inline Py_ssize_t class_run(const unsigned char* s, Py_ssize_t k, Py_ssize_t n,
                                 int mask) noexcept nogil:
    """End of the run of characters with a class bit in `mask` starting at byte k."""
    cdef uint32_t cp
    cdef Py_ssize_t nx
    while k < n:
        nx = next_char(s, k, n, &cp)
        if not (uc_entry(cp) & mask):
            break
        k = nx
    return k


cdef inline Py_ssize_t upperish_run(const unsigned char* s, Py_ssize_t k, Py_ssize_t n,
                                    Py_ssize_t* last_lower) noexcept nogil:
    """End of the UPPERISH run from byte k; last_lower gets the end of its last LOWERISH char or -1."""
    cdef uint32_t cp
    cdef uint16_t c
    cdef Py_ssize_t nx
    last_lower[0] = -1
    while k < n:
        nx = next_char(s, k, n, &cp)
        c = uc_entry(cp)
        if not (c & UC_UPPERISH):
            break
        if c & UC_LOWERISH:
            last_lower[0] = nx
        k = nx
    return k


cdef inline Py_ssize_t word_end(const unsigned char* s, Py_ssize_t i, Py_ssize_t after, Py_ssize_t n,
                                uint16_t c0) noexcept nogil:
    """End of the two word branches (without contraction) at byte i, or -1; `after` ends char i,
    which is a letter or a possible prefix [^\\r\\n\\p{L}\\p{N}].

    Backtracking order: prefixed [UPPERISH]*[LOWERISH]+, unprefixed, prefixed [UPPERISH]+[LOWERISH]*,
    unprefixed. A letter is never a prefix. One scan of the longest UPPERISH run [j, k) decides all:
    [UPPERISH]*[LOWERISH]+ takes the whole run when a LOWERISH run follows, else backtracks to end
    right after the run's last LOWERISH character (Lm, Lo or M); failing that, a prefix that is a
    mark matches alone unprefixed (it is LOWERISH); then [UPPERISH]+[LOWERISH]* takes a non-empty run.
    """
    cdef Py_ssize_t k, e, last_lower
    cdef Py_ssize_t j = i if c0 & UC_L else after
    k = upperish_run(s, j, n, &last_lower)
    e = class_run(s, k, n, UC_LOWERISH)
    if e > k:
        return e
    if last_lower >= 0:
        return last_lower
    if j == after and c0 & UC_M:
        return after
    return k if k > j else -1


cdef inline Py_ssize_t contraction_end(const unsigned char* s, Py_ssize_t e, Py_ssize_t n) noexcept nogil:
    """e extended over a following (?i:'s|'t|'re|'ve|'m|'ll|'d), if any."""
    cdef unsigned char c, c2
    if e + 1 >= n or s[e] != APOSTROPHE:
        return e
    c = s[e + 1] | 0x20
    if c == b's' or c == b't' or c == b'm' or c == b'd':
        return e + 2
    if e + 2 >= n:
        return e
    if s[e + 1] == 0xC5 and s[e + 2] == 0xBF:  # U+017F LATIN SMALL LETTER LONG S folds to s
        return e + 3
    c2 = s[e + 2] | 0x20
    if ((c == b'r' or c == b'v') and c2 == b'e') or (c == b'l' and c2 == b'l'):
        return e + 3
    return e


cdef inline Py_ssize_t punct_end(const unsigned char* s, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """End of [^\\s\\p{L}\\p{N}]*[\\r\\n/]* from byte k."""
    cdef uint32_t cp
    cdef Py_ssize_t nx
    while k < n and s[k] < 0x80 and not (uc_entry(s[k]) & (UC_L | UC_N | UC_WS)):  # ASCII: no decoding
        k += 1
    while k < n:
        nx = next_char(s, k, n, &cp)
        if uc_entry(cp) & (UC_L | UC_N | UC_WS):
            break
        k = nx
    while k < n and (s[k] == CR or s[k] == LF or s[k] == SLASH):
        k += 1
    return k


cdef inline Py_ssize_t digits_end(const unsigned char* s, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """End of up to two more \\p{N} characters from byte k (the tail of \\p{N}{1,3})."""
    cdef uint32_t cp
    cdef Py_ssize_t nx
    cdef int more
    for more in range(2):
        if k >= n:
            break
        nx = next_char(s, k, n, &cp)
        if not (uc_entry(cp) & UC_N):
            break
        k = nx
    return k


cdef inline Py_ssize_t whitespace_end(const unsigned char* s, Py_ssize_t i, Py_ssize_t n,
                                      bint newlines, bint whole_at_end) noexcept nogil:
    """End of the whitespace branches at byte i (a whitespace character):
    whole_at_end: \\s++$ (the run ends the text); newlines: \\s*[\\r\\n]+ (up to its last CR/LF);
    then \\s+(?!\\S) (all but the run's last character, when a non-space follows) | \\s+."""
    cdef uint32_t cp
    cdef Py_ssize_t k = i, nx, last_start = i, last_newline = -1
    while k < n and s[k] < 0x80 and uc_entry(s[k]) & UC_WS:  # ASCII whitespace: no decoding
        if s[k] == CR or s[k] == LF:
            last_newline = k + 1
        last_start = k
        k += 1
    while k < n:
        nx = next_char(s, k, n, &cp)
        if not (uc_entry(cp) & UC_WS):
            break
        if cp == CR or cp == LF:
            last_newline = nx
        last_start = k
        k = nx
    if whole_at_end and k == n:
        return n
    if newlines and last_newline >= 0:
        return last_newline
    if k == n or last_start == i:
        return k
    return last_start


cdef inline Py_ssize_t rest_end(const unsigned char* s, Py_ssize_t i, Py_ssize_t after, Py_ssize_t n,
                                uint32_t cp0, uint16_t c0, bint tekken) noexcept nogil:
    """End of the branches shared by both patterns (REST) at byte i; `tekken`: \\p{N} for \\p{N}{1,3}."""
    cdef uint32_t cp1
    cdef Py_ssize_t nx
    if c0 & UC_N:
        return after if tekken else digits_end(s, after, n)
    if cp0 == SPACE and after < n:
        nx = next_char(s, after, n, &cp1)
        if not (uc_entry(cp1) & (UC_L | UC_N | UC_WS)):
            return punct_end(s, nx, n)
    if c0 & UC_WS:
        return whitespace_end(s, i, n, True, False)
    return punct_end(s, after, n)


cdef inline bint ascii_in(unsigned char b, unsigned char first, unsigned char count) noexcept nogil:
    return <unsigned char>(b - first) < count


cdef inline int first_flagged_byte(uint64_t m) noexcept nogil:
    """The index of the first byte in memory of the word m that is not 0 (m != 0)."""
    return ctz64(le64(m)) >> 3


cdef inline Py_ssize_t ascii_lower_run(const unsigned char* s, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """End of the run of a-z bytes from k, 8 bytes per step: the high bit of each byte of `outside`
    says it is not in a-z (so a word costs one hard-to-predict branch, not one per letter)."""
    cdef uint64_t w, low, outside
    cdef uint64_t H = 0x8080808080808080ULL, L = 0x7F7F7F7F7F7F7F7FULL
    while k + 8 <= n:
        memcpy(&w, s + k, 8)
        low = w & L
        outside = (w | ~(low + 0x1F1F1F1F1F1F1F1FULL) | (low + 0x0505050505050505ULL)) & H
        if outside:
            return k + first_flagged_byte(outside)
        k += 8
    while k < n and ascii_in(s[k], 97, 26):
        k += 1
    return k


cdef inline Py_ssize_t ascii_word_end(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """`word_end` for an ASCII byte at i, reading ASCII only: the end of the word branches, -1 when
    none matches, or -2 when a byte that decides the match is not ASCII (the caller takes the general
    path). For ASCII, UPPERISH letters are A-Z and LOWERISH a-z."""
    cdef Py_ssize_t j = i, k, e
    cdef unsigned char b = s[i]
    if not ascii_in(b | 0x20, 97, 26):  # not a letter: a prefix, unless CR, LF or a digit
        if b == CR or b == LF or ascii_in(b, 48, 10) or i + 1 >= n:
            return -1
        j = i + 1
    k = j
    while k < n and ascii_in(s[k], 65, 26):
        k += 1
    e = ascii_lower_run(s, k, n)
    if e < n and s[e] >= 0x80:
        return -2
    if e > k:
        return e
    return k if k > j else -1


cdef inline Py_ssize_t match_main(const unsigned char* s, Py_ssize_t i, Py_ssize_t n, bint tekken) noexcept nogil:
    """End of the main pattern's match at byte i (`tekken`: Tekken's, with no contractions and single
    digits)."""
    cdef uint32_t cp0
    cdef Py_ssize_t e
    if s[i] < 0x80:
        e = ascii_word_end(s, i, n)
        if e >= 0:
            return e if tekken else contraction_end(s, e, n)
        if e == -1:
            return rest_end(s, i, i + 1, n, s[i], uc_entry(s[i]), tekken)
    cdef Py_ssize_t after = next_char(s, i, n, &cp0)
    cdef uint16_t c0 = uc_entry(cp0)
    if not (c0 & UC_N) and cp0 != CR and cp0 != LF:
        e = word_end(s, i, after, n, c0)
        if e >= 0:
            return e if tekken else contraction_end(s, e, n)
    return rest_end(s, i, after, n, cp0, c0, tekken)


cdef inline Py_ssize_t match_specific(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """End of the script-specific pattern's match at byte i."""
    cdef uint32_t cp0, cp1
    cdef Py_ssize_t nx, after = next_char(s, i, n, &cp0)
    cdef uint16_t c0 = uc_entry(cp0)
    if c0 & UC_L:
        return class_run(s, after, n, UC_M)
    if cp0 == SPACE and after < n:
        nx = next_char(s, after, n, &cp1)
        if uc_entry(cp1) & UC_L:
            return class_run(s, nx, n, UC_M)
    return rest_end(s, i, after, n, cp0, c0, False)


cdef inline int match_run(const unsigned char* s, Py_ssize_t start, Py_ssize_t end, bint specific,
                          Pretokens& ends, bint tekken) except -1 nogil:
    """Put the end of every pretoken of s[start:end], matched as a string of its own, in `ends`. The
    main pattern (`tekken`: Tekken's) takes ASCII text 64 bytes at a time (o200k_ascii.h), the rest
    pretoken by pretoken."""
    cdef const unsigned char* run = s + start
    cdef Py_ssize_t n = end - start, i = 0
    cdef uint64_t starts
    while i < n:
        if not specific and run[i] < 0x80 and (i + 1 == n or run[i + 1] < 0x80):  # else no window helps
            starts = tekken_ascii_starts(run, i, n) if tekken else o200k_ascii_starts(run, i, n)
            if starts:
                i = window_starts(starts, i, start, ends)
                continue
        i = match_specific(run, i, n) if specific else match_main(run, i, n, tekken)
        found(ends, start + i)
    return 0


cdef inline Py_ssize_t window_starts(uint64_t starts, Py_ssize_t i, Py_ssize_t offset, Pretokens& ends) noexcept nogil:
    """The pretokens a window at i found (bit j of `starts`: one starts at i + j) put in `ends`, each
    end moved by `offset`; the last start, where the next window begins."""
    cdef Py_ssize_t last = i
    if Pretokens is int64_t:
        ends += popcount64(starts)
        last = i + msb64(starts)
    else:
        while starts:
            last = i + ctz64(starts)
            starts &= starts - 1
            ends.push_back(offset + last)
    return last


# ---------------------------------------------------------------------------------------------------
# Script runs

cdef inline bint is_ascii(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t word, acc = 0
    cdef Py_ssize_t i = 0
    while i + 8 <= n:
        memcpy(&word, s + i, 8)
        acc |= word
        i += 8
    while i < n:
        acc |= s[i]
        i += 1
    return (acc & 0x8080808080808080ULL) == 0


cdef inline bint is_specific(int script) noexcept nogil:
    return SC_FIRST_SPECIFIC <= script <= SC_LAST_SPECIFIC


cdef inline Py_ssize_t skip_ascii_latin(const unsigned char* s, Py_ssize_t i, Py_ssize_t n,
                                         Py_ssize_t* last_end) noexcept nogil:
    """Skip the ASCII bytes from i inside a Latin run: letters (Latin) move last_end, the rest is
    Common. Return the offset of the first non-ASCII byte (or n)."""
    while i < n and s[i] < 0x80:
        if <unsigned char>((s[i] | 0x20) - 97) < 26:
            last_end[0] = i + 1
        i += 1
    return i


cdef inline int pretokenize_utf8(const unsigned char* s, Py_ssize_t n, bint script_aware,
                                 Pretokens& ends) except -1 nogil:
    """Put in `ends` the end byte offset (from s) of every pretoken of the UTF-8 text s[:n]."""
    cdef uint32_t cp
    cdef int script, current = -1  # the run's real script; -1 before the first one
    cdef int latin = uc_entry(97) >> 8
    cdef Py_ssize_t i = 0, nx, run_start = 0, last_end = 0
    if not script_aware or is_ascii(s, n):  # ASCII is Latin and Common only: one run
        return match_run(s, 0, n, False, ends, False)
    while i < n:
        if current == latin:
            i = skip_ascii_latin(s, i, n, &last_end)
            if i == n:
                break
        nx = next_char(s, i, n, &cp)
        script = uc_entry(cp) >> 8
        if script == current or script == SC_INHERITED:
            last_end = nx
        elif script != SC_COMMON and script != SC_UNKNOWN:  # a new real script
            if current >= 0:
                match_run(s, run_start, last_end, is_specific(current), ends, False)
                run_start = last_end
            current = script
            last_end = nx
        i = nx
    return match_run(s, run_start, n, is_specific(current), ends, False)


# ---------------------------------------------------------------------------------------------------
# Other tokenizers' patterns
#
# Each match is decided at byte i by its first character c (and the one after it), branch by branch
# in the pattern's order. \p{L}, \p{N}, \s and "other" ([^\s\p{L}\p{N}]) are disjoint classes.
#
# cl100k (tiktoken):
#     '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
#     |\s++$|\s*[\r\n]|\s+(?!\S)|\s
# Llama 3 (HF): (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
#     | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
# Qwen 2 (HF): Llama 3 with \p{N} (one digit per pretoken) for \p{N}{1,3}.
#   1. contraction: an apostrophe, then s|t|m|d|re|ve|ll in any ASCII case or U+017F LONG S (which
#      `regex` and fancy-regex fold to s; nothing else folds onto these letters, KELVIN SIGN folds to
#      k); it wins over the prefixed word: "'sa" -> "'s", "a", but "'x" -> "'x".
#   2. a letter run, after one optional prefix: any character but CR, LF, a letter or a digit (a
#      tab, NBSP or apostrophe too). Possessive ?+ / ++ (cl100k) change nothing: a prefix is never
#      a letter, so giving it back never lets \p{L}+ match, and nothing follows the letters.
#   3. 1-3 digits (Qwen 2: one).
#   4. U+0020 (only) followed by other characters, or other characters: their run, then [\r\n]*.
#   5. whitespace, from its whole run [i, k): cl100k only: \s++$ takes it all when k is the end of
#      the text (fancy-regex's $ without multiline; Python's $ also matches before a final "\n",
#      but a possessive run that stops early stops at a non-space, so \s++$ == \s++\Z); then
#      \s*[\r\n] or \s*[\r\n]+ end after the run's last CR/LF; then \s+(?!\S) ends at k when k is
#      the end, else before the run's last character if that leaves one; then \s or \s+ take the
#      single character left. So "a\n  " -> "a", "\n  " (cl100k) but "a", "\n", "  " (Llama 3).
# Tekken (Mistral): o200k's main pattern without (?i:'s|...)? and with \p{N} for \p{N}{1,3}, over the
#   whole text (no script runs): match_run's main pattern with `tekken` set, so "it's" -> "it", "'s"
#   (the apostrophe prefixes the letters) and "123" -> "1", "2", "3".
# GPT-2 (r50k/p50k/whisper, HF ByteLevel(use_regex=True)):
#     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
#   Contractions are case-sensitive; a U+0020 followed by a non-space joins the run of that
#   character's class (letters, digits or other); whitespace splits as in 5 without \s++$ and
#   without the CR/LF rule. tiktoken 0.14's r50k pattern '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++
#   | ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s splits the same: \s+(?!\S) also takes a final run whole.

cdef inline Py_ssize_t apostrophe_end(const unsigned char* s, Py_ssize_t i, Py_ssize_t n,
                                      bint fold) noexcept nogil:
    """End of 's|'t|'re|'ve|'m|'ll|'d at byte i (an apostrophe), or -1; fold: case-insensitively."""
    cdef unsigned char c
    cdef Py_ssize_t e
    if fold:
        e = contraction_end(s, i, n)
        return e if e > i else -1
    if i + 1 >= n:
        return -1
    c = s[i + 1]
    if c == b's' or c == b't' or c == b'm' or c == b'd':
        return i + 2
    if i + 2 < n and (((c == b'r' or c == b'v') and s[i + 2] == b'e') or (c == b'l' and s[i + 2] == b'l')):
        return i + 3
    return -1


cdef inline Py_ssize_t other_end(const unsigned char* s, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """End of [^\\s\\p{L}\\p{N}]* from byte k."""
    cdef uint32_t cp
    cdef Py_ssize_t nx
    while k < n:
        if s[k] < 0x80:
            if uc_entry(s[k]) & (UC_L | UC_N | UC_WS):
                break
            k += 1
            continue
        nx = next_char(s, k, n, &cp)
        if uc_entry(cp) & (UC_L | UC_N | UC_WS):
            break
        k = nx
    return k


cdef inline Py_ssize_t crlf_end(const unsigned char* s, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """End of [\\r\\n]* from byte k."""
    while k < n and (s[k] == CR or s[k] == LF):
        k += 1
    return k


cdef inline Py_ssize_t letters_end(const unsigned char* s, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """End of \\p{L}* from byte k (an ASCII fast path over class_run)."""
    cdef uint32_t cp
    cdef Py_ssize_t nx
    while k < n:
        if s[k] < 0x80:
            if <unsigned char>((s[k] | 0x20) - 97) >= 26:
                break
            k += 1
            continue
        nx = next_char(s, k, n, &cp)
        if not (uc_entry(cp) & UC_L):
            break
        k = nx
    return k


cdef inline Py_ssize_t match_cl100k_like(const unsigned char* s, Py_ssize_t i, Py_ssize_t n,
                                         bint three_digits, bint whole_at_end) noexcept nogil:
    """End of the cl100k (three_digits, whole_at_end), Llama 3 (three_digits) or Qwen 2 match at i."""
    cdef uint32_t cp0, cp1
    cdef Py_ssize_t e, nx, after = next_char(s, i, n, &cp0)
    cdef uint16_t c0 = uc_entry(cp0), c1
    if cp0 == APOSTROPHE:
        e = apostrophe_end(s, i, n, True)
        if e >= 0:
            return e
    if c0 & UC_L:
        return letters_end(s, after, n)
    if c0 & UC_N:
        return digits_end(s, after, n) if three_digits else after
    if after < n and cp0 != CR and cp0 != LF:  # c is other or a space: a possible prefix
        nx = next_char(s, after, n, &cp1)
        c1 = uc_entry(cp1)
        if c1 & UC_L:
            return letters_end(s, nx, n)
        if cp0 == SPACE and not (c1 & (UC_N | UC_WS)):
            return crlf_end(s, other_end(s, nx, n), n)
    if c0 & UC_WS:
        return whitespace_end(s, i, n, True, whole_at_end)
    return crlf_end(s, other_end(s, after, n), n)


cdef inline Py_ssize_t match_gpt2(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """End of the GPT-2 match at byte i."""
    cdef uint32_t cp0, cp1
    cdef Py_ssize_t e, nx, after = next_char(s, i, n, &cp0)
    cdef uint16_t c0 = uc_entry(cp0), c1
    if cp0 == APOSTROPHE:
        e = apostrophe_end(s, i, n, False)
        if e >= 0:
            return e
    elif cp0 == SPACE and after < n:
        nx = next_char(s, after, n, &cp1)
        c1 = uc_entry(cp1)
        if not (c1 & UC_WS):  # the space joins the run of the next character's class
            c0 = c1
            after = nx
    if c0 & UC_L:
        return letters_end(s, after, n)
    if c0 & UC_N:
        return class_run(s, after, n, UC_N)
    if c0 & UC_WS:
        return whitespace_end(s, i, n, False, False)
    return other_end(s, after, n)


cdef inline int match_windowed(const unsigned char* s, Py_ssize_t n, int pattern, Pretokens& ends) except -1 nogil:
    """Put the end of every pretoken of s[:n] under cl100k, Llama 3, Qwen 2 or GPT-2 (`pattern`) in
    `ends`: ASCII text 64 bytes at a time (cl100k_ascii.h, gpt2_ascii.h), the rest pretoken by
    pretoken."""
    cdef Py_ssize_t i = 0
    cdef uint64_t starts
    cdef bint gpt2 = pattern == PAT_GPT2, three_digits = pattern != PAT_QWEN2, whole_at_end = pattern == PAT_CL100K
    while i < n:
        if s[i] < 0x80 and (i + 1 == n or s[i + 1] < 0x80):  # else no window helps
            starts = gpt2_ascii_starts(s, i, n) if gpt2 else cl100k_ascii_starts(s, i, n, three_digits, whole_at_end)
            if starts:
                i = window_starts(starts, i, 0, ends)
                continue
        i = match_gpt2(s, i, n) if gpt2 else match_cl100k_like(s, i, n, three_digits, whole_at_end)
        found(ends, i)
    return 0


cdef inline int pretokenize_pattern(const unsigned char* s, Py_ssize_t n, int pattern,
                                    Pretokens& ends) except -1 nogil:
    """Put in `ends` the end byte offset (from s) of every pretoken of the UTF-8 text s[:n] under
    the pattern with id `pattern` (PAT_*); ValueError for an unknown id."""
    if pattern == PAT_O200K or pattern == PAT_SCRIPT_AWARE:
        return pretokenize_utf8(s, n, pattern == PAT_SCRIPT_AWARE, ends)
    if pattern == PAT_TEKKEN:
        return match_run(s, 0, n, False, ends, True)
    if pattern == PAT_CL100K or pattern == PAT_LLAMA3 or pattern == PAT_QWEN2 or pattern == PAT_GPT2:
        return match_windowed(s, n, pattern, ends)
    with gil:
        raise ValueError(f"unknown pretokenization pattern id {pattern}")
