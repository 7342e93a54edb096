"""Every read of a tokenizer file goes through here: regular files only, at most `MAX_FILE_BYTES`,
and the access check of whoever asked (from SQL: DuckDB's own file-access settings, see
`sqltok.named_tokenizers`), so that loading a tokenizer can read no more than its caller could."""
from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from sqltok.errors import SqltokError
from sqltok.formats.errors import ModelFormatError

#: The largest tokenizer file sqltok reads (the largest real ones are tens of MB).
MAX_FILE_BYTES = 1 << 29

_check: ContextVar[Callable[[Path], None] | None] = ContextVar("sqltok_file_check", default=None)


@contextmanager
def file_access(check: Callable[[Path], None]) -> Iterator[None]:
    """Within the block, `check(path)` runs before any tokenizer file is read (it raises to refuse)."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def checked(path: str | os.PathLike) -> Path:
    """`path`, after the access check, when it is a regular file of at most MAX_FILE_BYTES."""
    p = Path(path)
    check = _check.get()
    if check is not None:
        check(p)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise SqltokError(f"no such tokenizer file: {p}") from None
    except OSError as e:
        raise SqltokError(f"cannot read {p}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SqltokError(f"{p} is not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise ModelFormatError(f"{p}: {st.st_size:,} bytes, more than any tokenizer file "
                               f"({MAX_FILE_BYTES:,} bytes at most)")
    return p


def exists(path: str | os.PathLike) -> bool:
    """Whether `path` is a file the caller may read (its check passes)."""
    p = Path(path)
    if not p.is_file():
        return False
    checked(p)
    return True


def read_bytes(path: str | os.PathLike) -> bytes:
    with open(checked(path), "rb") as f:
        return f.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]


def read_head(path: str | os.PathLike, size: int) -> bytes:
    """The first `size` bytes of a file."""
    with open(checked(path), "rb") as f:
        return f.read(size)


def read_utf8(path: str | os.PathLike) -> str:
    """The text of a UTF-8 file; invalid UTF-8 is an error naming the line."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ModelFormatError(f"{path}: line {line}: invalid UTF-8 ({e.reason})") from None
