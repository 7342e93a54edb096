"""Character offsets of WordPiece tokens into the original text, as HF `tokenizers` gives them.

HF's BertNormalizer changes a text character by character (control characters dropped, whitespace
made a space, spaces put around CJK ideographs, accents stripped after NFD, lowercasing that may
lengthen a character) and aligns each normalized character with the original character it came
from; a token's offsets run from the start of its first character's original to the end of its
last one's. So each original character is normalized alone here (one Arrow call for all of them),
except where NFD reorders accents across characters (HF then aligns by position, as
`sqltok.normalizers.alignment` does). The tokens the encoder gave are laid over the normalized text
in order: the pre-tokenizer's words are separated by whitespace and each punctuation character is a
word of its own; a word's first piece starts it, a continuation ("##") piece follows the previous
one, and [UNK] covers the rest of its word.
"""
from __future__ import annotations

import pyarrow as pa
import regex
import unicodedata2

from sqltok.formats.errors import UnsupportedTokenizerError
from sqltok.normalizers import bert_normalize
from sqltok.normalizers.alignment import nfd_origin
from sqltok.white_space import WHITE_SPACE
from sqltok.wordpiece.files import WordPieceSpec

_PUNCTUATION = regex.compile(r"[\p{P}\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]")


def wordpiece_offsets(spec: WordPieceSpec, text: str, ids: list[int]) -> list[tuple[int, int]]:
    """The offsets of `ids`, the encoding of `text` with the post-processor's template around it
    (a tokenizer with non-special added tokens is refused: they are not laid over the text here)."""
    if spec.added_tokens:
        raise UnsupportedTokenizerError(f"offsets of {spec.name!r}: its non-special added tokens "
                                        f"{sorted(spec.added_tokens)[:3]} are not followed by sqltok's offsets")
    before, after = spec.single
    body = ids[len(before):len(ids) - len(after)]
    normalized, origin = _normalized(spec, text)
    unk = spec.tokens.index(spec.unk_token)
    offsets: list[tuple[int, int]] = []
    at, in_word = 0, False
    for t in body:
        token = spec.tokens[t]
        continues = in_word and token.startswith(spec.prefix) and t != unk
        if not continues:
            while at < len(normalized) and normalized[at] in WHITE_SPACE:
                at += 1
        if t == unk:
            end = _word_end(normalized, at)
        else:
            piece = token[len(spec.prefix):] if continues else token
            if not normalized.startswith(piece, at):
                raise ValueError(f"token {token!r} does not match the normalized text at {at}")
            end = at + len(piece)
        if end <= at:
            raise ValueError(f"token {token!r} covers no text at {at}")
        offsets.append((origin[at], origin[end - 1] + 1))
        in_word = not _is_punctuation(normalized[end - 1]) and end < len(normalized) and \
            normalized[end] not in WHITE_SPACE and not _is_punctuation(normalized[end])
        at = end
    return [(0, 0)] * len(before) + offsets + [(0, 0)] * len(after)


def _normalized(spec: WordPieceSpec, text: str) -> tuple[str, list[int]]:
    """The normalized text and the original character each of its characters stands for."""
    if spec.normalizer is None:
        return text, list(range(len(text)))
    clean, chinese, strip, lower = spec.normalizer
    chars = pa.array(list(text), pa.large_string())
    pieces = _bert(chars, clean, chinese, strip, lower)
    origin = [i for i, piece in enumerate(pieces) for _ in piece]
    if strip:
        cleaned = _bert(chars, clean, chinese, False, False)
        reordered = nfd_origin("".join(cleaned))
        if reordered is not None:  # NFD moved a part across characters: HF aligns by position
            before = [i for i, piece in enumerate(cleaned) for _ in piece]
            parts, at = reordered
            kept = [(c, before[k]) for c, k in zip(parts, at) if unicodedata2.category(c) != "Mn"]
            lowered = _bert(pa.array([c for c, _ in kept], pa.large_string()), False, False, False, lower)
            origin = [o for (_, o), piece in zip(kept, lowered) for _ in piece]
            if "".join(lowered) != "".join(pieces):
                raise ValueError("the normalizer's alignment does not give the normalized text")
            pieces = lowered
    return "".join(pieces), origin


def _bert(chars: pa.Array, clean: bool, chinese: bool, strip: bool, lower: bool) -> list[str]:
    """BertNormalizer of each character alone."""
    return bert_normalize(chars, clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                          lowercase=lower).to_pylist()


def _word_end(text: str, start: int) -> int:
    """Where the pre-tokenizer's word that starts at `start` ends."""
    if start < len(text) and _is_punctuation(text[start]):
        return start + 1
    end = start
    while end < len(text) and text[end] not in WHITE_SPACE and not _is_punctuation(text[end]):
        end += 1
    return end


def _is_punctuation(c: str) -> bool:
    """HF BertPreTokenizer's punctuation: ASCII punctuation or a Unicode P* character."""
    return _PUNCTUATION.match(c) is not None
