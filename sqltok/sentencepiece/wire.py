"""The protobuf wire format, as much of it as a SentencePiece ModelProto uses: reading a message into
its fields, and writing fields back.

Hostile bytes get a `ModelFormatError` saying where the message breaks (a varint longer than ten bytes,
a length past the end, a group or an unknown wire type), never a crash or a hang: every step moves
forward through a buffer whose end is known.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator

from sqltok.formats.errors import ModelFormatError

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


def _varint(data: bytes, at: int, where: str) -> tuple[int, int]:
    """The varint at `at` and the offset after it."""
    value = shift = 0
    for i in range(at, min(at + 10, len(data))):
        b = data[i]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, i + 1
        shift += 7
    if at + 10 <= len(data):
        raise ModelFormatError(f"{where}: a varint at byte {at} is longer than ten bytes")
    raise ModelFormatError(f"{where}: the data ends inside a varint at byte {at} (truncated?)")


def fields(data: bytes, where: str) -> Iterator[tuple[int, int, int | bytes, int, int]]:
    """(field number, wire type, value, start, end) of each field of the message `data`: the value is
    an int for varint and fixed fields, the bytes of length-delimited ones; the field as written is
    data[start:end]."""
    at, end = 0, len(data)
    while at < end:
        start = at
        key, at = _varint(data, at, where)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ModelFormatError(f"{where}: field number 0 at byte {at} (not a protobuf message?)")
        if wire == VARINT:
            value, at = _varint(data, at, where)
        elif wire == FIXED32 or wire == FIXED64:
            size = 4 if wire == FIXED32 else 8
            if at + size > end:
                raise ModelFormatError(f"{where}: field {number} ends past the data (truncated?)")
            value = int.from_bytes(data[at:at + size], "little")
            at += size
        elif wire == BYTES:
            size, at = _varint(data, at, where)
            if size > end - at:
                raise ModelFormatError(f"{where}: field {number} holds {size:,} bytes but only {end - at:,} "
                                       "are left (truncated?)")
            value = data[at:at + size]
            at += size
        else:
            raise ModelFormatError(f"{where}: field {number} has wire type {wire}, which a ModelProto "
                                   "never uses (corrupt file?)")
        yield number, wire, value, start, at


def expect(wire: int, wanted: int, number: int, where: str) -> None:
    """A clear error when field `number` does not have the wire type its schema gives it."""
    if wire != wanted:
        raise ModelFormatError(f"{where}: field {number} has wire type {wire}, expected {wanted} (corrupt file?)")


def as_float(bits: int) -> float:
    """The float32 whose bits a fixed32 field holds."""
    return struct.unpack("<f", bits.to_bytes(4, "little"))[0]


def as_int32(value: int) -> int:
    """A varint read as int32 (negative numbers are written as 64-bit two's complement)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def as_text(value: bytes, number: int, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFormatError(f"{where}: string field {number} is not valid UTF-8") from None


# -- writing ----------------------------------------------------------------------------------------
def _put_varint(value: int) -> bytes:
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_field(number: int, value: int) -> bytes:
    """A varint field (ints, bools and enums; negative ints as 64-bit two's complement)."""
    return _put_varint(number << 3 | VARINT) + _put_varint(value)


def bytes_field(number: int, value: bytes | str) -> bytes:
    """A length-delimited field (strings, bytes and nested messages)."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    return _put_varint(number << 3 | BYTES) + _put_varint(len(value)) + value


def float_field(number: int, value: float) -> bytes:
    """A float (fixed32) field."""
    return _put_varint(number << 3 | FIXED32) + struct.pack("<f", value)
