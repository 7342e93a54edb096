"""Reading a JSON tokenizer file with errors that say where it is broken (never its content)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from sqltok.formats.errors import ModelFormatError
from sqltok.formats.files import read_bytes


#: a string escape: an escaped backslash, a surrogate pair, or a lone surrogate (group 1)
_ESCAPE = re.compile(rb"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                     rb"|(u[dD][89a-fA-F][0-9a-fA-F]{2}))")


def load_json(path: Path, data: bytes | None = None) -> object:
    """The parsed JSON of `path` (or of `data`, its bytes, when the caller read them already). A
    lone surrogate escape ("\\ud800", which `json` takes and HF's serde_json refuses) is an error:
    it is no character, and no UTF-8 string could hold it."""
    if data is None:
        data = read_bytes(path)
    try:
        doc = json.loads(data)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ModelFormatError(f"{path}: line {line}: invalid UTF-8 ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{path}: line {e.lineno} column {e.colno}: invalid JSON ({e.msg})") from None
    except RecursionError:
        raise ModelFormatError(f"{path}: JSON nested too deeply to read") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise ModelFormatError(f"{path}: JSON that cannot be read ({str(e).split(':')[0]})") from None
    if re.search(rb"\\u[dD][89a-fA-F]", data):
        for m in _ESCAPE.finditer(data):
            if m.group(1):
                line = data.count(b"\n", 0, m.start()) + 1
                column = m.start() - data.rfind(b"\n", 0, m.start())
                raise ModelFormatError(f"{path}: line {line} column {column}: a lone surrogate escape "
                                       f"(\\{m.group(1).decode()}), which is no character")
    return doc


def strings_by_id(vocab: object, what: str) -> list[str]:
    """The strings of a tokenizer.json `model.vocab` ({string: id}) in id order; the ids must be
    0..n-1, each once (`what` names the field in the error)."""
    if not isinstance(vocab, dict) or sorted(vocab.values()) != list(range(len(vocab))):
        raise ModelFormatError(f"{what} must map strings to the ids 0..n-1, each once")
    strings = [""] * len(vocab)
    for string, i in vocab.items():
        strings[i] = string
    return strings
