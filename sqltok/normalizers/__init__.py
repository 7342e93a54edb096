"""`normalize` (NFC, NFD, NFKC, NFKD) and `bert_normalize` (HF's BertNormalizer) for Python: a str, a
list of str (or bytes, which must be UTF-8) or a pyarrow string array in, the same kind out (an
array comes back as string_view, whose unchanged rows point into the input)."""
from __future__ import annotations

from typing import Sequence, TypeVar

import pyarrow as pa

from sqltok.normalizers._normalize import UNICODE_VERSION, bert_normalize_arrow, normalize_arrow
from sqltok.errors import SqltokError
from sqltok.normalizers.bert import bert_switches

Texts = TypeVar("Texts", str, Sequence[str], pa.Array)

__all__ = ["UNICODE_VERSION", "bert_normalize", "normalize"]


def normalize(texts: Texts, form: str = "NFC") -> Texts:
    """The Unicode `form` ('NFC', 'NFD', 'NFKC', 'NFKD'; Unicode 17.0) of `texts`."""
    return _apply(texts, lambda arr: normalize_arrow(arr, form))


def bert_normalize(texts: Texts, *, clean_text: bool = True, handle_chinese_chars: bool = True,
                   strip_accents: bool | None = None, lowercase: bool = True) -> Texts:
    """HF `BertNormalizer(clean_text, handle_chinese_chars, strip_accents, lowercase)` of `texts`;
    strip_accents None follows lowercase, as in HF."""
    switches = bert_switches(clean_text, handle_chinese_chars, strip_accents, lowercase)
    return _apply(texts, lambda arr: bert_normalize_arrow(arr, *switches))


def _apply(texts, fn):
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):  # one output type whatever changed: string_view
        out = fn(_checked(texts))
        return out if pa.types.is_string_view(out.type) else out.cast(pa.string_view())
    if isinstance(texts, (str, bytes)):
        return fn(_checked([texts]))[0].as_py()
    return fn(_checked(list(texts))).to_pylist()


def _checked(texts) -> pa.Array:
    """A string array; bytes must be UTF-8 and str must not hold lone surrogates (clear errors)."""
    if isinstance(texts, list):
        try:
            texts = pa.array(texts, pa.large_binary() if any(isinstance(t, bytes) for t in texts)
                             else pa.large_string())
        except (UnicodeEncodeError, pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise SqltokError(f"texts must be str without lone surrogates, or UTF-8 bytes: {e}") from None
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if pa.types.is_binary(texts.type) or pa.types.is_large_binary(texts.type) or pa.types.is_binary_view(texts.type):
        try:
            return texts.cast(pa.large_string())
        except pa.ArrowInvalid:
            bad = next(i for i, b in enumerate(texts.to_pylist()) if b is not None and not _is_utf8(b))
            raise SqltokError(f"row {bad} is not valid UTF-8") from None
    return texts


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
