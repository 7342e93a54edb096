"""GPT-2's reversible bytes <-> printable-unicode mapping (as used by HF `tokenizers` ByteLevel).

Printable Latin-1 bytes map to themselves; the other 68 bytes (controls, space, 0x7F-0xA0, 0xAD)
map in order to U+0100..U+0143, so a space becomes "Ġ" and a newline "Ċ". No mapped char is
whitespace, so a mapped token never contains a space or a line break.
"""
from __future__ import annotations


def _build_table() -> tuple[str, ...]:
    """The char of each byte value 0..255."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in printable]
    chars = {b: chr(b) for b in printable} | {b: chr(0x100 + n) for n, b in enumerate(others)}
    return tuple(chars[b] for b in range(256))


_BYTE_TO_CHAR: tuple[str, ...] = _build_table()
_CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(_BYTE_TO_CHAR)}


def bytes_to_unicode_str(b: bytes) -> str:
    """Map each byte to its printable char."""
    return "".join(_BYTE_TO_CHAR[x] for x in b)


def unicode_str_to_bytes(s: str) -> bytes:
    """Inverse of `bytes_to_unicode_str`; ValueError on a char outside the mapping."""
    try:
        return bytes(_CHAR_TO_BYTE[c] for c in s)
    except KeyError as e:
        raise ValueError(
            f"character {e.args[0]!r} (U+{ord(e.args[0]):04X}) in {s!r} is not in the "
            "GPT-2 byte-to-unicode mapping"
        ) from None
