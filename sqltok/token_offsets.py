"""Character offsets of tokens: `EncodedText`, what `Tokenizer.encode_with_offsets` returns, and the
mapping from the byte spans of tokens to character offsets into the original text.

Offsets are HF `tokenizers`' (`Encoding.offsets`): (start, end) indices into the Python string the
caller gave. A token whose bytes are part of a character covers that whole character; a token made
from normalized text covers the original characters the normalizer aligned it with; a token the
post-processor adds ([CLS], [SEP]) is (0, 0).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

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


def byte_span_offsets(text: str, lengths: np.ndarray, origin: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Character offsets of tokens that cover the UTF-8 of `text` back to back, `lengths` bytes each.
    `origin`: for each character of `text`, the index of the original character it stands for (when
    `text` is a normalized form of the original), or None when `text` is the original."""
    if int(lengths.sum()) != len(text.encode("utf-8")):
        raise ValueError("the tokens do not cover the text's bytes")
    ends = np.cumsum(lengths)
    return byte_range_offsets(text, ends - lengths, ends, origin)


def byte_range_offsets(text: str, starts: np.ndarray, ends: np.ndarray,
                       origin: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Character offsets of tokens over the UTF-8 byte ranges [starts, ends) of `text` (not empty; a
    range that starts or ends inside a character covers it); `origin` as for `byte_span_offsets`."""
    data = np.frombuffer(text.encode("utf-8"), np.uint8)
    char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
    starts, lasts = char_of_byte[starts], char_of_byte[ends - 1]
    if origin is not None:
        starts, lasts = origin[starts], origin[lasts]
    return list(zip(starts.tolist(), (lasts + 1).tolist()))


def byte_offsets_to_chars(text: str, begins: Sequence[int] | np.ndarray,
                          ends: Sequence[int] | np.ndarray) -> list[tuple[int, int]]:
    """Character offsets from (begin, end) byte offsets into the UTF-8 of `text`: a begin inside a
    character moves to its start, an end inside one to its end."""
    data = np.frombuffer(text.encode("utf-8"), np.uint8)
    chars_before = np.concatenate([[0], np.cumsum((data & 0xC0) != 0x80)])  # characters started before byte b
    begins = np.asarray(begins, np.int64)
    starts = chars_before[np.minimum(begins + 1, len(data))] - (begins < len(data))
    return list(zip(starts.tolist(), chars_before[np.asarray(ends, np.int64)].tolist()))
