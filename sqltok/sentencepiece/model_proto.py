"""A SentencePiece model file (`sentencepiece_model.proto`'s ModelProto) read into Python values.

`read_model_proto` parses the bytes (see `wire.py`) and checks them as sentencepiece 0.2.3's
`ModelInterface::InitializePieces` does (no empty, repeated, over-long or NUL-holding piece; one
unknown piece unless byte pieces stand in for it; byte pieces only with `byte_fallback`, and then
all 256), so that a file sentencepiece refuses is refused here too, with the file's name and what is
wrong. What sqltok's encoder does not implement (WORD and CHAR
models, a denormalizer) is named and refused rather than ignored.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import IntEnum

from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.sentencepiece.wire import BYTES, FIXED32, VARINT, as_float, as_int32, as_text, expect, fields


class PieceType(IntEnum):
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


class ModelType(IntEnum):
    UNIGRAM = 1
    BPE = 2
    WORD = 3
    CHAR = 4


#: What a byte piece looks like ("<0x41>"), as sentencepiece's PieceToByte reads it.
BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
#: sentencepiece 0.2.3 refuses pieces of this many bytes or more.
MAX_PIECE_BYTES = 8000
#: sentencepiece's default surface of the unknown piece in decoded text.
DEFAULT_UNK_SURFACE = " \u2047 "


@dataclass(frozen=True)
class NormalizerSpec:
    """NormalizerSpec: the precompiled charsmap (a double-array trie of replacements; empty for
    `identity`) and the whitespace options."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    normalization_rule_tsv: str = ""


@dataclass(frozen=True)
class TrainerSpec:
    """The TrainerSpec fields that change encoding or decoding, a few that say what the model is,
    and every other field as it was read (`other`: encoded fields, written back unchanged)."""

    model_type: ModelType = ModelType.UNIGRAM
    vocab_size: int = 8000
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    unk_surface: str | None = None          # None: not set (sentencepiece decodes <unk> as " ⁇ ")
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    other: bytes = b""


@dataclass(frozen=True)
class SentencePieceModel:
    """A ModelProto: the pieces by id with their scores and types, and the specs."""

    pieces: list[str]
    scores: list[float]
    types: list[PieceType]
    trainer: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer: NormalizerSpec = field(default_factory=NormalizerSpec)
    denormalizer: NormalizerSpec | None = None

    @property
    def unk_surface(self) -> str:
        return DEFAULT_UNK_SURFACE if self.trainer.unk_surface is None else self.trainer.unk_surface


_TRAINER_FIELDS = {3: "model_type", 4: "vocab_size", 35: "byte_fallback", 24: "treat_whitespace_as_suffix",
                   44: "unk_surface", 40: "unk_id", 41: "bos_id", 42: "eos_id", 43: "pad_id"}
_NORMALIZER_FIELDS = {1: "name", 2: "precompiled_charsmap", 3: "add_dummy_prefix", 4: "remove_extra_whitespaces",
                      5: "escape_whitespaces", 6: "normalization_rule_tsv"}
_STRINGS = {"name", "normalization_rule_tsv", "unk_surface"}
_BLOBS = {"precompiled_charsmap"}
_BOOLS = {"byte_fallback", "treat_whitespace_as_suffix", "add_dummy_prefix", "remove_extra_whitespaces",
          "escape_whitespaces"}


def _spec_values(data: bytes, names: dict[int, str], where: str) -> tuple[dict, bytes]:
    """The named fields of a spec message (the last occurrence wins, as in protobuf) and the other
    fields' encoded bytes."""
    values: dict = {}
    other = bytearray()
    for number, wire, value, start, end in fields(data, where):
        name = names.get(number)
        if name is None:
            other += data[start:end]
        elif name in _STRINGS or name in _BLOBS:
            expect(wire, BYTES, number, where)
            values[name] = value if name in _BLOBS else as_text(value, number, where)
        else:
            expect(wire, VARINT, number, where)
            values[name] = bool(value) if name in _BOOLS else as_int32(value)
    return values, bytes(other)


def _piece(data: bytes, where: str) -> tuple[str, float, int]:
    piece, score, kind = "", 0.0, int(PieceType.NORMAL)
    for number, wire, value, _, _ in fields(data, where):
        if number == 1:
            expect(wire, BYTES, number, where)
            piece = as_text(value, number, where)
        elif number == 2:
            expect(wire, FIXED32, number, where)
            score = as_float(value)
        elif number == 3:
            expect(wire, VARINT, number, where)
            kind = as_int32(value)
    return piece, score, kind


def read_model_proto(data: bytes, source: str) -> SentencePieceModel:
    """The ModelProto in `data` (the bytes of `source`, named in errors), checked as sentencepiece
    checks it on loading."""
    pieces: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    specs: dict[int, bytes] = {}  # a spec message given twice is merged, as protobuf merges it: its bytes joined
    for number, wire, value, _, _ in fields(data, source):
        if number in (1, 2, 3, 5):
            expect(wire, BYTES, number, source)
        if number == 1:
            piece, score, kind = _piece(value, f"{source}: piece {len(pieces)}")
            pieces.append(piece)
            scores.append(score)
            types.append(kind)
        elif number in (2, 3, 5):
            specs[number] = specs.get(number, b"") + value
    values, other = _spec_values(specs.get(2, b""), _TRAINER_FIELDS, f"{source}: trainer_spec")
    trainer = TrainerSpec(**values, other=other)
    normalizer = NormalizerSpec(**_spec_values(specs.get(3, b""), _NORMALIZER_FIELDS, f"{source}: normalizer_spec")[0])
    denormalizer = None if 5 not in specs else NormalizerSpec(**_spec_values(specs[5], _NORMALIZER_FIELDS,
                                                                              f"{source}: denormalizer_spec")[0])
    model = SentencePieceModel(pieces, scores, [_piece_type(t, i, source) for i, t in enumerate(types)],
                               _trainer_with_type(trainer, source), normalizer, denormalizer)
    check_model(model, source)
    return model


def _piece_type(value: int, i: int, source: str) -> PieceType:
    try:
        return PieceType(value)
    except ValueError:
        raise ModelFormatError(f"{source}: piece {i} has type {value}, which is none of sentencepiece's "
                               "(1 NORMAL .. 6 BYTE)") from None


def _trainer_with_type(trainer: TrainerSpec, source: str) -> TrainerSpec:
    try:
        kind = ModelType(trainer.model_type)
    except ValueError:
        raise ModelFormatError(f"{source}: trainer_spec.model_type {trainer.model_type} is none of "
                               "sentencepiece's (1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR)") from None
    return TrainerSpec(**{**trainer.__dict__, "model_type": kind})


def check_model(model: SentencePieceModel, source: str) -> None:
    """sentencepiece's checks on loading, and a clear refusal of what sqltok does not implement."""
    if not model.pieces:
        raise ModelFormatError(f"{source}: the model has no pieces (not a SentencePiece model, or truncated?)")
    if model.trainer.model_type not in (ModelType.UNIGRAM, ModelType.BPE):
        raise UnsupportedTokenizerError(f"{source}: model type {model.trainer.model_type.name} is not implemented "
                                        "(sqltok reads UNIGRAM and BPE SentencePiece models)")
    if model.denormalizer is not None and model.denormalizer.precompiled_charsmap:
        raise UnsupportedTokenizerError(f"{source}: a denormalizer_spec with a charsmap "
                                        f"({model.denormalizer.name or 'unnamed'}) is not implemented")
    check_charsmap(model.normalizer.precompiled_charsmap, source)
    # BPE models keep every piece in one table, Unigram models the reserved ones apart
    bpe = model.trainer.model_type == ModelType.BPE
    seen: tuple[dict, dict] = ({}, {})
    unk = -1
    has_byte = [False] * 256
    for i, (piece, kind, score) in enumerate(zip(model.pieces, model.types, model.scores)):
        if not piece:
            raise ModelFormatError(f"{source}: piece {i} is empty")
        if "\0" in piece:
            raise ModelFormatError(f"{source}: piece {i} holds a NUL character")
        if len(piece.encode()) >= MAX_PIECE_BYTES:
            raise ModelFormatError(f"{source}: piece {i} is {len(piece.encode()):,} bytes long "
                                   f"(sentencepiece takes fewer than {MAX_PIECE_BYTES:,})")
        if not bpe and not math.isfinite(score):
            raise ModelFormatError(f"{source}: piece {i} has the score {score}")
        normal = bpe or kind in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
        table = seen[0 if normal else 1]
        if piece in table:
            raise ModelFormatError(f"{source}: piece {i} {piece!r} is already defined (as piece {table[piece]})")
        table[piece] = i
        if kind == PieceType.UNKNOWN:
            if unk >= 0:
                raise ModelFormatError(f"{source}: pieces {unk} and {i} are both the unknown piece")
            unk = i
        if kind == PieceType.BYTE:
            if not model.trainer.byte_fallback:
                raise ModelFormatError(f"{source}: byte piece {i} {piece!r} but trainer_spec.byte_fallback is false")
            m = BYTE_PIECE.fullmatch(piece)
            if m is None:
                raise ModelFormatError(f"{source}: byte piece {i} {piece!r} is not of the form <0xHH>")
            has_byte[int(m.group(1), 16)] = True
    if unk < 0 and not model.trainer.byte_fallback:
        raise ModelFormatError(f"{source}: no piece is the unknown piece (type UNKNOWN)")
    if model.trainer.byte_fallback and not all(has_byte):
        raise ModelFormatError(f"{source}: byte_fallback is true but only {sum(has_byte)} of the 256 byte "
                               "pieces are there")


def check_charsmap(blob: bytes, source: str) -> None:
    """The precompiled charsmap's frame: a little-endian uint32 trie size, the trie (uint32 units)
    and the NUL-terminated replacement strings."""
    if not blob:
        return
    if len(blob) <= 4:
        raise ModelFormatError(f"{source}: normalizer_spec.precompiled_charsmap is broken ({len(blob)} bytes)")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) or size % 4 or size == 0:
        raise ModelFormatError(f"{source}: normalizer_spec.precompiled_charsmap: its trie of {size:,} bytes "
                               f"does not fit its {len(blob):,} bytes in whole units")
    if blob[4 + size:] and blob[-1] != 0:
        raise ModelFormatError(f"{source}: normalizer_spec.precompiled_charsmap: its replacement strings "
                               "do not end with a NUL byte (truncated?)")
