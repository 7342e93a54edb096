"""Character offsets of tokens: `EncodedText`, what `Tokenizer.encode_with_offsets` returns, and the
mapping from the byte spans of tokens to character offsets into the original text.

Offsets are HF `tokenizers`' (`Encoding.offsets`): (start, end) indices into the Python string the
caller gave. A token whose bytes are part of a character covers that whole character; a token made
from normalized text covers the original characters the normalizer aligned it with; a token the
post-processor adds ([CLS], [SEP]) is (0, 0).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sqltok.errors import SqltokError


class EncodedText(NamedTuple):
    """A text's token ids and each token's (start, end) character offsets into the text."""

    ids: list[int]
    offsets: list[tuple[int, int]]


def require_unicode(text: str) -> None:
    """SqltokError unless `text` is valid Unicode (holds no surrogate): offsets are into its UTF-8."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise SqltokError("offsets are into valid Unicode text; this text holds a surrogate") from None


def byte_span_offsets(text: str, lengths: np.ndarray, origin: np.ndarray | None = None,
                      covered: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Character offsets of tokens that cover the UTF-8 of `text` back to back, `lengths` bytes each.
    `origin`: for each character of `text`, the index of the original character it stands for (when
    `text` is a normalized form of the original), or None when `text` is the original. `covered`:
    which bytes of `text` the tokens cover (a pattern may leave text out), or None for all of them."""
    data = np.frombuffer(text.encode("utf-8"), np.uint8)
    at = np.arange(len(data)) if covered is None else np.flatnonzero(covered)  # the bytes the tokens lie over
    if int(lengths.sum()) != len(at):
        raise ValueError("the tokens do not cover the text's bytes")
    char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
    ends = np.cumsum(lengths)
    starts = char_of_byte[at[ends - lengths]]
    lasts = char_of_byte[at[ends - 1]]
    if origin is not None:
        starts, lasts = origin[starts], origin[lasts]
    return list(zip(starts.tolist(), (lasts + 1).tolist()))


def byte_offsets_to_chars(text: str, begins: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Character offsets from (begin, end) byte offsets into the UTF-8 of `text`: a begin inside a
    character moves to its start, an end inside one to its end."""
    data = np.frombuffer(text.encode("utf-8"), np.uint8)
    chars_before = np.concatenate([[0], np.cumsum((data & 0xC0) != 0x80)])  # characters started before byte b
    starts = chars_before[np.minimum(np.asarray(begins, np.int64) + 1, len(data))]
    starts -= np.asarray(begins, np.int64) < len(data)
    return list(zip(starts.tolist(), chars_before[np.asarray(ends, np.int64)].tolist()))
