"""A trained Unigram model as SentencePiece's `.model` file: the `ModelProto` protobuf (proto2) with its
pieces (piece, score, type), the trainer spec of the run and the normalizer spec (name, precompiled
charsmap, whitespace flags), in the protobuf wire format (`sqltok.sentencepiece.wire`; fields in number
order, as protobuf serializes them), with the trainer flags of the run as spm_train records them."""
from __future__ import annotations

from sqltok.sentencepiece.model_proto import read_model_proto
from sqltok.sentencepiece.wire import bytes_field as _bytes, float_field as _float, varint_field as _int
from sqltok.unigram.spec import NORMAL, UnigramSpec

UNIGRAM = 1


def _trainer_spec(spec: UnigramSpec, inputs: list[str]) -> bytes:
    """TrainerSpec fields the run set, by field number."""
    fields = [(1, _bytes, s) for s in inputs]
    fields += [(3, _int, UNIGRAM), (4, _int, spec.vocab_size), (10, _float, spec.character_coverage),
               (14, _int, spec.seed_sentencepiece_size), (15, _float, spec.shrinking_factor),
               (16, _int, 1), (17, _int, spec.num_sub_iterations), (18, _int, spec.max_sentence_length),
               (20, _int, spec.max_sentencepiece_length), (21, _int, spec.split_by_unicode_script),
               (22, _int, spec.split_by_whitespace), (23, _int, spec.split_by_number),
               (24, _int, spec.treat_whitespace_as_suffix), (25, _int, spec.split_digits)]
    fields += [(30, _bytes, s) for s in spec.control_symbols]
    fields += [(31, _bytes, s) for s in spec.user_defined_symbols]
    fields += [(35, _int, spec.byte_fallback), (40, _int, spec.unk_id), (41, _int, spec.bos_id),
               (42, _int, spec.eos_id), (43, _int, spec.pad_id), (45, _bytes, spec.unk_piece),
               (46, _bytes, spec.bos_piece), (47, _bytes, spec.eos_piece), (48, _bytes, spec.pad_piece)]
    return b"".join(write(number, value) for number, write, value in sorted(fields, key=lambda f: f[0]))


def _normalizer_spec(spec: UnigramSpec, charsmap: bytes) -> bytes:
    out = _bytes(1, spec.normalization_rule_name)
    if charsmap:
        out += _bytes(2, charsmap)
    return out + _int(3, spec.add_dummy_prefix) + _int(4, spec.remove_extra_whitespaces) + _int(5, 1)


def model_proto(pieces: list[tuple[str, float, int]], spec: UnigramSpec, charsmap: bytes,
                inputs: list[str]) -> bytes:
    """The serialized ModelProto of `pieces` (piece, score, type) in id order."""
    out = bytearray()
    for piece, score, kind in pieces:
        body = _bytes(1, piece) + _float(2, score) + (b"" if kind == NORMAL else _int(3, kind))
        out += _bytes(1, body)
    out += _bytes(2, _trainer_spec(spec, inputs))
    out += _bytes(3, _normalizer_spec(spec, charsmap))
    return bytes(out)


def vocabulary(final: list[tuple[str, float]], spec: UnigramSpec) -> list[tuple[str, float, int]]:
    """The model's pieces by id: the meta pieces at their ids (score 0), the trained pieces in the
    other ids, best first."""
    meta = spec.meta_pieces()
    out: list[tuple[str, float, int]] = []
    rest = iter(final)
    for id_ in range(spec.vocab_size):
        if id_ in meta:
            out.append((meta[id_][0], 0.0, meta[id_][1]))
        else:
            nxt = next(rest, None)
            if nxt is None:
                continue
            out.append((nxt[0], nxt[1], NORMAL))
    return out


def read_pieces(proto: bytes) -> list[tuple[str, float, int]]:
    """The (piece, score, type) of each piece of a serialized ModelProto, by id."""
    model = read_model_proto(proto, "the ModelProto")
    return [(p, s, int(t)) for p, s, t in zip(model.pieces, model.scores, model.types)]
