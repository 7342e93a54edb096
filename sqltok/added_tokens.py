"""HF `tokenizers`' added tokens as the matcher (`sqltok/native/added_match.pxd`) takes them: each
token's flags from a tokenizer.json entry, and the Unicode classes HF's matching tests (Rust regex's
`\\w` before and after a `single_word` token, `\\s` that `lstrip` and `rstrip` take in).

A token's flags, as HF reads them (`AddedToken`): `lstrip` / `rstrip` (the token takes in the white
space on its left / right), `single_word` (it matches only where no word character touches it), and
`normalized` (it is matched in the normalized text, after the tokens that are not; a missing
`normalized` is true for a token that is not special, false for a special one).
"""
from __future__ import annotations

import warnings
from functools import cache
from typing import NamedTuple

import numpy as np
import regex

from sqltok.formats.errors import ModelFormatError

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


class HfAddedTokens(NamedTuple):
    """A tokenizer.json's added tokens by content, with the ids HF gives them."""
    special: dict[str, int]
    added: dict[str, int]                   # the tokens that are not special
    flags: dict[str, AddedTokenFlags]       # of the tokens that have any flag set


def read_added_tokens(entries: object, vocab: dict[str, int]) -> HfAddedTokens:
    """The `added_tokens` of a tokenizer.json over the model's `vocab`.

    HF does not take the "id" of an added token from the file: a token in the vocabulary gets its
    vocabulary id, any other the next id from len(vocab) on, in file order (`AddedVocabulary::
    add_tokens`); it only warns when that differs from the file. So does this.
    """
    if not isinstance(entries, list):
        raise ModelFormatError("added_tokens must be a list")
    out = HfAddedTokens({}, {}, {})
    owner = {i: token for token, i in vocab.items()}
    next_id = len(vocab)  # the next one not in the vocabulary: after the vocabulary's size, whatever its ids
    for n, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("content"), str) and entry["content"]):
            raise ModelFormatError(f"added_tokens[{n}]: expected an object with a non-empty content string")
        content = entry["content"]
        if content in out.special or content in out.added:
            raise ModelFormatError(f"added_tokens[{n}]: {content!r} is listed twice")
        if AddedTokenFlags.from_hf(entry) != AddedTokenFlags():
            out.flags[content] = AddedTokenFlags.from_hf(entry)
        if content in vocab:
            i = vocab[content]
        else:
            i, next_id = next_id, next_id + 1
            if i in owner:
                raise ModelFormatError(f"added_tokens[{n}]: HF gives {content!r} the id {i}, which is the "
                                       f"id of the vocabulary token {owner[i]!r}")
        if entry.get("id") != i:
            warnings.warn(f"added token {content!r} has id {entry.get('id')!r} in the file but HF gives it "
                          f"{i}; using {i}, as HF does", UserWarning, stacklevel=5)
        (out.special if entry.get("special", False) else out.added)[content] = i
    return out
