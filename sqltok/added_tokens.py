"""HF `tokenizers`' added tokens as the matcher (`sqltok/native/added_match.pxd`) takes them: each
token's flags from a tokenizer.json entry, and the Unicode classes HF's matching tests (Rust regex's
`\\w` before and after a `single_word` token, `\\s` that `lstrip` and `rstrip` take in).

A token's flags, as HF reads them (`AddedToken`): `lstrip` / `rstrip` (the token takes in the white
space on its left / right), `single_word` (it matches only where no word character touches it), and
`normalized` (it is matched in the normalized text, after the tokens that are not; a missing
`normalized` is true for a token that is not special, false for a special one).
"""
from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
import regex

#: Rust regex's Unicode `\w` and `\s` (UTS #18 Annex C), which HF's added-token matching uses.
WORD = r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]"
SPACE = r"\p{White_Space}"


class AddedTokenFlags(NamedTuple):
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False

    @classmethod
    def from_hf(cls, entry: dict) -> AddedTokenFlags:
        """The flags of one `added_tokens` entry of a tokenizer.json."""
        return cls(bool(entry.get("lstrip", False)), bool(entry.get("rstrip", False)),
                   bool(entry.get("single_word", False)),
                   bool(entry.get("normalized", not entry.get("special", False))))

    def names(self) -> list[str]:
        """The names of the flags that are set (for messages)."""
        return [name for name, on in self._asdict().items() if on]


@cache
def code_point_ranges(pattern: str) -> tuple[int, ...]:
    """The code points a one-character `pattern` matches, as sorted first, last, first, last, ...
    (surrogates excluded; built once, in a few hundredths of a second)."""
    out: list[int] = []
    for lo, hi in ((0, 0xD800), (0xE000, 0x110000)):
        chars = np.arange(lo, hi, dtype="<u4").tobytes().decode("utf-32-le")
        for m in regex.finditer(pattern + "+", chars):
            out += [lo + m.start(), lo + m.end() - 1]
    return tuple(out)
