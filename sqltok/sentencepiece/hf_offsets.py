"""HF `tokenizers`' character offsets (`Encoding.offsets`) of a SentencePiece-style tokenizer.json,
by HF's pipeline followed on one text with its alignments (`sqltok.normalizers.hf_normalized`):
the added tokens cut the text; each piece between them goes through the normalizer's steps and then
the pre-tokenizer's, as the file lists them; the encoder's model encodes each pre-token
(`model_spans`); a token covers the original characters its bytes are aligned with, as HF turns
byte offsets into character offsets of the original text.

So "▁" from Prepend or Metaspace is aligned with the first character, one from Replace(" " -> "▁")
with its space; the Precompiled charsmap's replacements with the characters they replace ("ﬁ" ->
"fi": both with "ﬁ"; a removed character joins the character before it); the byte pieces of an
unknown character (BPE) or of an unknown run (Unigram) all cover it.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache

import regex

from sqltok.native._added_split import AddedSplitter
from sqltok.normalizers.alignment import tagged_normalization
from sqltok.normalizers.hf_normalized import Change, Normalized
from sqltok.sentencepiece._encode import SentencePieceEncoder
from sqltok.sentencepiece.hf_graphemes import grapheme_ends
from sqltok.sentencepiece.hf_read import HfSentencePiece, metaspace_scheme
from sqltok.token_offsets import EncodedText, byte_offsets_to_chars
from sqltok.white_space import WHITE_SPACE

_MARK = regex.compile(r"\p{M}")
_BEHAVIORS = {"Removed": "removed", "Isolated": "isolated", "MergedWithPrevious": "merged_with_previous",
              "MergedWithNext": "merged_with_next"}


def hf_offsets(hf: HfSentencePiece, encoder: SentencePieceEncoder, added: AddedSplitter, text: str,
               allowed) -> EncodedText:
    """Ids and offsets of `text` (valid Unicode) as HF's `encode(text, add_special_tokens=False)`
    gives them, the special tokens `allowed` (None, "all" or a set of ids) matched."""
    data = text.encode()
    ids: list[int] = []
    spans: list[tuple[int, int]] = []
    for start, end, token in added.split_spans(text, allowed):
        if token >= 0:
            ids.append(token)
            spans.append((start, end))
            continue
        if start == end:
            continue
        piece = Normalized.of(data[start:end].decode(), start)
        for step in hf.hf_normalizer:
            _normalize(step, piece, encoder)
        pieces = [piece.slice(0, len(piece.chars))] if piece.chars else []  # HF's second added-token pass
        for step in hf.hf_pre_tokenizer:
            pieces = [part for p in pieces for part in _pre_tokenize(step, p)]
        for p in pieces:
            part_ids, part_spans = encoder.model_spans(p.text)
            ids += part_ids
            spans += _original_spans(p, part_spans)
    return EncodedText(ids, _char_offsets(text, data, spans))


# -- the normalizer --------------------------------------------------------------------------------
def _normalize(step: dict, piece: Normalized, encoder: SentencePieceEncoder) -> None:
    """One normalizer step (of those `hf_read` accepts) over `piece`, with HF's alignments."""
    kind = step["type"]
    if kind == "Precompiled":
        _precompiled(piece, encoder)
    elif kind == "Replace":
        piece.replace(_matches(step["pattern"], piece.text), step["content"])
    elif kind == "Prepend":
        piece.prepend(step["prepend"])
    elif kind == "Strip":
        piece.strip(bool(step.get("strip_left")), bool(step.get("strip_right")))
    elif kind in ("NFC", "NFD", "NFKC", "NFKD"):
        piece.transform(tagged_normalization(piece.text, kind))
    elif kind == "StripAccents":
        piece.filter(lambda c: not _MARK.fullmatch(c))
    elif kind == "Lowercase":  # Rust's char::to_lowercase: the full mapping of each character alone
        piece.transform([(low, int(k > 0)) for c in piece.chars for k, low in enumerate(c.lower())])
    else:
        raise ValueError(f"no HF alignment for the normalizer step {kind!r}")


def _precompiled(piece: Normalized, encoder: SentencePieceEncoder) -> None:
    """HF's Precompiled: each replacement (a grapheme or a character, `hf_precompiled.pxd`) as its
    changes (HF's `replace`: the replacement's characters replace the old ones in order, the ones
    beyond them are inserted, the removal of old ones beyond them goes on the last character so
    far), every other character kept."""
    text = piece.text
    out, units = encoder.hf_precompiled(text, grapheme_ends(text), True)
    if not units:
        return
    data, new = text.encode(), out.encode()
    dest: list[Change] = []
    at = k = u = 0  # byte, character, unit
    while k < len(piece.chars):
        if u < len(units) and units[u] == at:
            old = data[units[u]:units[u + 1]].decode()
            _replace(dest, len(old), new[units[u + 2]:units[u + 3]].decode())
            at, k, u = units[u + 1], k + len(old), u + 4
        else:
            dest.append((piece.chars[k], 0))
            at += len(piece.chars[k].encode())
            k += 1
    piece.transform(dest)


def _replace(dest: list[Change], old_count: int, new: str) -> None:
    diff = len(new) - old_count
    dest += [(c, 0) for c in new]
    if diff > 0:
        dest[len(dest) - diff:] = [(c, 1) for c, _ in dest[len(dest) - diff:]]
    elif diff < 0 and dest:
        dest[-1] = (dest[-1][0], dest[-1][1] + diff)


def _matches(pattern: dict, text: str) -> list[tuple[int, int]]:
    """The character ranges a Replace's or Split's pattern ({"String": s} or {"Regex": r}) matches
    (none in an empty text, as HF's `find_matches`: Replace(\\z -> "▁") adds nothing to it)."""
    if not text:
        return []
    (kind, value), = pattern.items()
    source = regex.escape(value) if kind == "String" else value.replace(r"\z", r"\Z")
    return [m.span() for m in _compiled(source).finditer(text)]


@cache
def _compiled(source: str) -> regex.Pattern:
    return regex.compile(source)


# -- the pre-tokenizer ---------------------------------------------------------------------------
def _pre_tokenize(step: dict, piece: Normalized) -> list[Normalized]:
    """One pre-tokenizer step (of those `hf_read` accepts) over one pre-token: the ones it makes."""
    kind = step["type"]
    if kind == "Metaspace":
        space = step["replacement"]
        piece.replace(_chars(piece, lambda c: c == " "), space)
        scheme = metaspace_scheme(step)
        if not piece.text.startswith(space) and (scheme == "always" or scheme == "first" and piece.original[0] == 0):
            piece.prepend(space)
        if not step.get("split", True):
            return [piece]
        return piece.split(_chars(piece, lambda c: c == space), "merged_with_next")
    if kind == "WhitespaceSplit":
        return piece.split(_chars(piece, WHITE_SPACE.__contains__), "removed")
    if kind == "Split":
        return piece.split(_matches(step["pattern"], piece.text), _BEHAVIORS[step["behavior"]])
    raise ValueError(f"no HF alignment for the pre-tokenizer step {kind!r}")


def _chars(piece: Normalized, hit: Callable[[str], bool]) -> list[tuple[int, int]]:
    """Each character a character pattern matches, as its own match (HF's `Pattern` for a char)."""
    return [(i, i + 1) for i, c in enumerate(piece.chars) if hit(c)]


# -- offsets ---------------------------------------------------------------------------------------
def _original_spans(piece: Normalized, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The original byte ranges of tokens spanning UTF-8 byte ranges of a pre-token: from the start
    of the first character's alignment to the end of the last's (HF's `convert_offsets`)."""
    chars = byte_offsets_to_chars(piece.text, [s for s, _ in spans], [e for _, e in spans])
    return [(piece.align[first][0], piece.align[end - 1][1]) for first, end in chars]


def _char_offsets(text: str, data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges of the original as character offsets, as HF's `BytesToCharOffsetConverter` turns
    them (a range that starts at the end stays in bytes)."""
    inside = [k for k, (s, _) in enumerate(spans) if s < len(data)]
    out = list(spans)
    chars = byte_offsets_to_chars(text, [spans[k][0] for k in inside], [spans[k][1] for k in inside])
    for k, c in zip(inside, chars):
        out[k] = c
    return out
