"""Reading a JSON tokenizer file with errors that say where it is broken (never its content)."""
from __future__ import annotations

import json
from pathlib import Path

from sqltok.formats.errors import ModelFormatError
from sqltok.formats.files import read_bytes


def load_json(path: Path, data: bytes | None = None) -> object:
    """The parsed JSON of `path` (or of `data`, its bytes, when the caller read them already)."""
    if data is None:
        data = read_bytes(path)
    try:
        return json.loads(data)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ModelFormatError(f"{path}: line {line}: invalid UTF-8 ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{path}: line {e.lineno} column {e.colno}: invalid JSON ({e.msg})") from None


def strings_by_id(vocab: object, what: str) -> list[str]:
    """The strings of a tokenizer.json `model.vocab` ({string: id}) in id order; the ids must be
    0..n-1, each once (`what` names the field in the error)."""
    if not isinstance(vocab, dict) or sorted(vocab.values()) != list(range(len(vocab))):
        raise ModelFormatError(f"{what} must map strings to the ids 0..n-1, each once")
    strings = [""] * len(vocab)
    for string, i in vocab.items():
        strings[i] = string
    return strings
