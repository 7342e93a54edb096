"""Write a `SentencePieceModel` as a ModelProto (a `.model` file `sentencepiece` loads): the pieces
with their scores and types, then the trainer, normalizer and (if any) denormalizer specs.

Fields are written in their field-number order within each message, as protobuf's own serializer
does; a `TrainerSpec`'s `other` fields (those sqltok does not interpret) follow its typed ones
unchanged, so that a model read and written again keeps every training flag.
"""
from __future__ import annotations

from sqltok.sentencepiece.model_proto import NormalizerSpec, PieceType, SentencePieceModel, TrainerSpec, check_model
from sqltok.sentencepiece.wire import bytes_field, float_field, varint_field


def _piece(piece: str, score: float, kind: PieceType) -> bytes:
    out = bytes_field(1, piece) + float_field(2, score)
    if kind != PieceType.NORMAL:  # NORMAL is the default, as sentencepiece's trainer leaves it out
        out += varint_field(3, int(kind))
    return out


def _trainer(spec: TrainerSpec) -> bytes:
    out = (varint_field(3, int(spec.model_type)) + varint_field(4, spec.vocab_size)
           + varint_field(24, spec.treat_whitespace_as_suffix) + varint_field(35, spec.byte_fallback)
           + varint_field(40, spec.unk_id) + varint_field(41, spec.bos_id) + varint_field(42, spec.eos_id)
           + varint_field(43, spec.pad_id))
    if spec.unk_surface is not None:
        out += bytes_field(44, spec.unk_surface)
    return out + spec.other


def _normalizer(spec: NormalizerSpec) -> bytes:
    out = bytes_field(1, spec.name) if spec.name else b""
    if spec.precompiled_charsmap:
        out += bytes_field(2, spec.precompiled_charsmap)
    out += (varint_field(3, spec.add_dummy_prefix) + varint_field(4, spec.remove_extra_whitespaces)
            + varint_field(5, spec.escape_whitespaces))
    if spec.normalization_rule_tsv:
        out += bytes_field(6, spec.normalization_rule_tsv)
    return out


def write_model_proto(model: SentencePieceModel) -> bytes:
    """The serialized ModelProto of `model` (checked first as `read_model_proto` checks a file)."""
    check_model(model, "the model to write")
    if not len(model.pieces) == len(model.scores) == len(model.types):
        raise ValueError(f"{len(model.pieces)} pieces, {len(model.scores)} scores and {len(model.types)} types")
    out = bytearray()
    for piece, score, kind in zip(model.pieces, model.scores, model.types):
        out += bytes_field(1, _piece(piece, score, PieceType(kind)))
    out += bytes_field(2, _trainer(model.trainer))
    out += bytes_field(3, _normalizer(model.normalizer))
    if model.denormalizer is not None:
        out += bytes_field(5, _normalizer(model.denormalizer))
    return bytes(out)
