"""A trained Unigram model as SentencePiece's `.model` file: the `ModelProto` protobuf (proto2) with its
pieces (piece, score, type), the trainer spec of the run and the normalizer spec (name, precompiled
charsmap, whitespace flags), written by hand in the protobuf wire format (fields in number order,
as protobuf serializes them)."""
from __future__ import annotations

import struct

from sqltok.unigram.spec import NORMAL, UnigramSpec

UNIGRAM = 1


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(int(value))


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _key(field, 2) + _varint(len(data)) + data


def _float(field: int, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", value)


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


def _fields(data: bytes):
    """(field number, wire type, value) of a protobuf message: ints for varints, bytes otherwise."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 2:
            size, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        else:
            raise ValueError(f"protobuf wire type {wire} is not supported")
        yield number, wire, value


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("a protobuf varint runs past the end")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def read_pieces(proto: bytes) -> list[tuple[str, float, int]]:
    """The (piece, score, type) of each piece of a serialized ModelProto, by id."""
    out = []
    for number, _, value in _fields(proto):
        if number != 1:
            continue
        piece, score, kind = "", 0.0, NORMAL
        for n, _, v in _fields(value):
            if n == 1:
                piece = v.decode()
            elif n == 2:
                score = struct.unpack("<f", v)[0]
            elif n == 3:
                kind = v
        out.append((piece, score, kind))
    return out
