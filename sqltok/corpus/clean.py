"""Cleaning: decode BLOB text (invalid UTF-8 fixed with U+FFFD or the document dropped), strip control
characters, apply a Unicode normal form (sqltok's NFC..NFKD), keep documents within length bounds."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb

from sqltok.errors import SqltokError
from sqltok.sql_files import sql_text

FORMS = ("NFC", "NFD", "NFKC", "NFKD")


@dataclass(frozen=True)
class CleanSettings:
    """`invalid_utf8` is "fix" (U+FFFD) or "drop"; `form` a normal form or None; lengths in characters."""

    invalid_utf8: str = "fix"
    form: str | None = None
    min_chars: int = 1
    max_chars: int = 2**31 - 1

    def __post_init__(self) -> None:
        if self.invalid_utf8 not in ("fix", "drop"):
            raise SqltokError(f"invalid UTF-8 is either fixed ('fix') or dropped ('drop'), not {self.invalid_utf8!r}")
        if self.form is not None and self.form not in FORMS:
            raise SqltokError(f"unknown normal form {self.form!r}: expected one of {', '.join(FORMS)}")
        if not 0 <= self.min_chars <= self.max_chars:
            raise SqltokError(f"the length bounds must satisfy 0 <= min <= max, not {self.min_chars}, {self.max_chars}")


def _is_blob(con: duckdb.DuckDBPyConnection, source: str) -> bool:
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {source})").fetchall())
    if "text" not in types:
        raise SqltokError(f"the source has no column 'text' (it has {', '.join(types)})")
    return types["text"] == "BLOB"


def invalid_utf8_count(con: duckdb.DuckDBPyConnection, source: str) -> int:
    """Documents of `source` whose BLOB text is not valid UTF-8 (0 for VARCHAR text)."""
    if not _is_blob(con, source):
        return 0
    return con.execute(f"SELECT count(*) FROM ({source}) WHERE text IS NOT NULL AND try(decode(text)) IS NULL"
                       ).fetchone()[0]


def clean_query(con: duckdb.DuckDBPyConnection, source: str, settings: CleanSettings) -> str:
    """A query of `source`'s rows, cleaned (a `text` column, VARCHAR, plus every other column)."""
    if _is_blob(con, source):
        decode = "try(decode(text))" if settings.invalid_utf8 == "drop" else "sqltok_decode_utf8(text)"
    else:
        decode = "text"
    normalize = "text" if settings.form is None else f"normalize(text, '{settings.form}')"
    return sql_text("prepare_clean").format(source=source, decode=decode, normalize=normalize,
                                            min_chars=int(settings.min_chars), max_chars=int(settings.max_chars))
