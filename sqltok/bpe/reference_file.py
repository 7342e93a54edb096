"""Read and write the reference implementation's `.model` text format (v2).

Layout (UTF-8, "\\n" line ends, one trailing newline)::

    BoundlessBPE v2 <word|boundless|superbpe>
    vocabulary / <n> / "<id> <token> <count> <is_super>" x n      (ids 0..n-1 in order)
    special_tokens / <m> / "<id> <string>" x m                    (by id; the string is the rest of the line)
    words / <settings JSON> / merges / <k> / "<index> <left> <right> <count> <flag>" x k / deletions / 0
    superwords / ...same block for the supermerges...             (boundless and superbpe only)

Tokens are written in GPT-2 byte-to-unicode form, so they never contain a space and every
vocabulary or merge line splits unambiguously on " ". The settings line is `json.dumps(settings)`
with default separators. Reading then writing a reference file reproduces it byte for byte.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator

from sqltok.bpe.byte_unicode import bytes_to_unicode_str, unicode_str_to_bytes
from sqltok.formats.errors import ExportError, ModelFormatError
from sqltok.formats.files import read_utf8
from sqltok.bpe.model import METHODS, Merge, Model

MAGIC = "BoundlessBPE"
VERSION = "v2"


# ----------------------------------------------------------------------------- writing


def dumps(model: Model) -> str:
    """The `.model` text of `model`."""
    if model.method == "word" and (model.supermerges or model.super_settings is not None):
        raise ValueError("a 'word' model cannot have supermerges or super_settings")
    if model.method != "word" and model.super_settings is None:
        raise ValueError(f"a {model.method!r} model needs super_settings")
    names = [bytes_to_unicode_str(t) for t in model.tokens]
    lines = [f"{MAGIC} {VERSION} {model.method}", *_vocabulary_lines(model, names),
             *_special_token_lines(model.special_tokens), "words",
             *_section_lines(model.settings, model.merges, names)]
    if model.method != "word":
        lines += ["superwords", *_section_lines(model.super_settings, model.supermerges, names)]
    return "\n".join(lines) + "\n"


def write_reference(model: Model, path: str | os.PathLike) -> None:
    """Write `model` to `path` in the reference `.model` format ("\\n" line ends on every OS)."""
    with open(path, "wb") as f:
        f.write(dumps(model).encode("utf-8"))


def _vocabulary_lines(model: Model, names: list[str]) -> Iterator[str]:
    yield "vocabulary"
    yield str(len(names))
    for i, (name, count, sup) in enumerate(zip(names, model.token_counts, model.is_super)):
        yield f"{i} {name} {count} {int(sup)}"


def _special_token_lines(special_tokens: dict[str, int]) -> Iterator[str]:
    yield "special_tokens"
    yield str(len(special_tokens))
    for text, i in sorted(special_tokens.items(), key=lambda kv: kv[1]):
        if "\n" in text or "\r" in text:
            raise ExportError(f"special token {text!r} contains a line break, which a reference .model file "
                              "cannot hold (--format hf can)")
        yield f"{i} {text}"


def _section_lines(settings: dict, merges: list[Merge], names: list[str]) -> Iterator[str]:
    yield json.dumps(settings)
    yield "merges"
    yield str(len(merges))
    for i, m in enumerate(merges):
        if not (0 <= m.left < len(names) and 0 <= m.right < len(names)):
            raise ValueError(f"merge {i} refers to a token id outside 0..{len(names) - 1}: {m}")
        yield f"{i} {names[m.left]} {names[m.right]} {m.count} {m.flag}"
    yield "deletions"
    yield "0"


# ----------------------------------------------------------------------------- reading


def read_reference(path: str | os.PathLike) -> Model:
    """Read a reference `.model` file; ModelFormatError (with the line number) if it is invalid."""
    text = read_utf8(path)
    try:
        return loads(text)
    except ModelFormatError as e:
        raise ModelFormatError(f"{path}: {e}") from None


def loads(text: str) -> Model:
    """Parse the text of a `.model` file. Like the reference (text mode), "\\r\\n" reads as "\\n"."""
    lines = _Lines(text.replace("\r\n", "\n").replace("\r", "\n"))
    method = _read_header(lines)
    tokens, counts, is_super, ids = _read_vocabulary(lines)
    special_tokens = _read_special_tokens(lines, len(tokens))
    lines.expect("words")
    settings, merges = _read_section(lines, ids)
    supermerges: list[Merge] = []
    super_settings = None
    if method != "word":
        lines.expect("superwords")
        super_settings, supermerges = _read_section(lines, ids)
    lines.expect_end()
    return Model(method, tokens, counts, is_super, merges, settings, special_tokens,
                 supermerges, super_settings)


class _Lines:
    """A cursor over the lines of a file that reports errors with 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self._lines = text.split("\n")
        if self._lines[-1] == "":
            self._lines.pop()  # the final newline ends the last line
        self.number = 0  # line number of the line last taken

    def take(self, expected: str) -> str:
        """The next line; `expected` describes it for the end-of-file error."""
        if self.number >= len(self._lines):
            raise ModelFormatError(f"line {self.number + 1}: unexpected end of file, expected {expected}")
        self.number += 1
        return self._lines[self.number - 1]

    def error(self, message: str) -> ModelFormatError:
        return ModelFormatError(f"line {self.number}: {message}")

    def expect(self, keyword: str) -> None:
        line = self.take(repr(keyword))
        if line != keyword:
            raise self.error(f"expected {keyword!r}")

    def expect_end(self) -> None:
        if self.number < len(self._lines):
            self.number += 1
            raise self.error("unexpected content after the last section")

    def fields(self, n: int, what: str) -> list[str]:
        """The next line split on single spaces into exactly `n` fields."""
        line = self.take(what)
        parts = line.split(" ")
        if len(parts) != n:
            raise self.error(f"expected {what} ({n} space-separated fields)")
        return parts

    def integer(self, field: str, what: str, minimum: int | None = None) -> int:
        """`field` as a decimal integer (ASCII digits, optional "-") of at least `minimum`."""
        stripped = field[1:] if field.startswith("-") else field
        if not (stripped.isascii() and stripped.isdigit()) or (minimum is not None and int(field) < minimum):
            bound = f" >= {minimum}" if minimum is not None else ""
            raise self.error(f"expected {what} (an integer{bound})")
        return int(field)

    def count(self, what: str) -> int:
        """A line holding the number of entries that follow."""
        return self.integer(self.take(f"the number of {what}"), f"the number of {what}", 0)

    def flag(self, field: str, what: str) -> int:
        if field not in ("0", "1"):
            raise self.error(f"expected {what} (0 or 1)")
        return int(field)

    def token(self, field: str) -> bytes:
        try:
            return unicode_str_to_bytes(field)
        except ValueError as e:
            raise self.error(str(e)) from None


def _read_header(lines: _Lines) -> str:
    line = lines.take("the header line")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != MAGIC:
        raise lines.error(f"not a reference model file: expected '{MAGIC} {VERSION} <method>'")
    if parts[1] != VERSION:
        raise lines.error(f"unsupported format version {parts[1]!r}; only {VERSION} is supported")
    if parts[2] not in METHODS:
        raise lines.error(f"unknown method {parts[2]!r}; expected one of {METHODS}")
    return parts[2]


def _read_vocabulary(lines: _Lines) -> tuple[list[bytes], list[int], list[bool], dict[str, int]]:
    """Tokens, counts and is_super flags by id, and the token string -> id map."""
    lines.expect("vocabulary")
    n = lines.count("vocabulary tokens")
    tokens: list[bytes] = []
    counts: list[int] = []
    is_super: list[bool] = []
    ids: dict[str, int] = {}
    for i in range(n):
        id_, name, count, sup = lines.fields(4, "a vocabulary line '<id> <token> <count> <is_super>'")
        if lines.integer(id_, "a token id") != i:
            raise lines.error(f"expected token id {i}")
        if name in ids:
            raise lines.error(f"token {name!r} is already in the vocabulary with id {ids[name]}")
        tokens.append(lines.token(name))
        counts.append(lines.integer(count, "a token count"))
        is_super.append(bool(lines.flag(sup, "the is_super flag")))
        ids[name] = i
    return tokens, counts, is_super, ids


def _read_special_tokens(lines: _Lines, vocab_size: int) -> dict[str, int]:
    lines.expect("special_tokens")
    m = lines.count("special tokens")
    special: dict[str, int] = {}
    for _ in range(m):
        line = lines.take("a special token line '<id> <string>'")
        if " " not in line:
            raise lines.error(f"expected a special token line '<id> <string>'")
        id_, text = line.split(" ", 1)
        special[text] = lines.integer(id_, "a special token id", vocab_size)
    if len(set(special.values())) != m or len(special) != m:
        raise lines.error("special tokens must have distinct strings and distinct ids")
    return special


def _read_section(lines: _Lines, ids: dict[str, int]) -> tuple[dict, list[Merge]]:
    """A settings line, a merges block and an (empty) deletions block."""
    settings = _read_settings(lines)
    lines.expect("merges")
    merges = [_read_merge(lines, i, ids) for i in range(lines.count("merges"))]
    lines.expect("deletions")
    if lines.count("deletions") != 0:
        raise lines.error("PickyBPE deletions are not supported: sqltok reads only models with an "
                          "empty deletions block (the reference's default, tau >= 1)")
    return settings, merges


def _read_settings(lines: _Lines) -> dict:
    line = lines.take("the settings JSON line")
    try:
        settings = json.loads(line)
    except json.JSONDecodeError as e:
        raise lines.error(f"invalid settings JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(settings, dict):
        raise lines.error(f"expected a settings JSON object")
    if not isinstance(settings.get("main_regex"), str):  # the pre-tokenization pattern encoders need
        raise lines.error("the settings JSON object has no main_regex string")
    return settings


def _read_merge(lines: _Lines, i: int, ids: dict[str, int]) -> Merge:
    index, left, right, count, flag = lines.fields(5, "a merge line '<index> <left> <right> <count> <flag>'")
    if lines.integer(index, "a merge index") != i:
        raise lines.error(f"expected merge index {i}")
    # Look tokens up by content: a merge whose result already existed adds no token, so merge i
    # does not in general create token 243 + i.
    for name in (left, right, left + right):
        if name not in ids:
            raise lines.error(f"merge {i}: token {name!r} is not in the vocabulary")
    return Merge(ids[left], ids[right], lines.integer(count, "a merge count"), lines.flag(flag, "the merge flag"))
