"""Which texts HF's Precompiled normalizer reads differently from sentencepiece's (see
`hf_precompiled.pxd`): those holding a grapheme of more than one character. A text is picked out
when it holds a character that joins the one before it into a grapheme (marks, ZWJ and ZWNJ,
halfwidth sound marks, emoji modifiers and tags, conjoining Hangul jamo, regional indicators,
Prepend characters, Thai and Lao AM) or CR LF; only those go grapheme by grapheme (the `regex`
module's `\\X`, Unicode's extended grapheme clusters), the rest keep the fast path.
"""
from __future__ import annotations

from itertools import accumulate

import pyarrow as pa
import pyarrow.compute as pc
import regex

#: An RE2 pattern (pyarrow's) for a character that can join a grapheme to the one before it.
GRAPHEME_JOINER = (r"[\p{M}\x{200C}\x{200D}\x{FF9E}\x{FF9F}\x{1F3FB}-\x{1F3FF}\x{E0020}-\x{E007F}"
                   r"\x{1100}-\x{11FF}\x{A960}-\x{A97F}\x{D7B0}-\x{D7FF}\x{1F1E6}-\x{1F1FF}"
                   r"\x{0600}-\x{0605}\x{06DD}\x{070F}\x{0890}\x{0891}\x{08E2}\x{0D4E}\x{0E33}\x{0EB3}"
                   r"\x{110BD}\x{110CD}\x{111C2}\x{111C3}\x{1193F}\x{11941}\x{11A3A}\x{11A84}-\x{11A89}"
                   r"\x{11D46}]|\r\n")
_GRAPHEME = regex.compile(r"\X")


def multi_char_graphemes(texts: pa.Array) -> pa.Array:
    """For each text (NULL: false), whether it may hold a grapheme of more than one character."""
    return pc.match_substring_regex(texts, GRAPHEME_JOINER).fill_null(False)


def grapheme_ends(text: str) -> list[int]:
    """The UTF-8 byte offset where each grapheme of `text` ends."""
    return list(accumulate(len(g.encode()) for g in _GRAPHEME.findall(text)))
