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
