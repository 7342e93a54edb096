"""Which tokenizers a DuckDB connection knows by name: loaded from files (`sqltok_load`) or the models
stored in its database (loaded on first use, dropped from the cache when a model is rewritten)."""
from __future__ import annotations

import weakref
from pathlib import Path

import duckdb

from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.errors import ModelNotFoundError, SqltokError
from sqltok.formats.files import file_access
from sqltok.store import model_exists
from sqltok.tokenizer import Tokenizer

_by_connection: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, NamedTokenizers]" = weakref.WeakKeyDictionary()


class NamedTokenizers:
    """Tokenizers by name for one connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = weakref.ref(con)
        self._loaded: dict[str, Tokenizer] = {}   # from files: these win over database models
        self._cached: dict[str, Tokenizer] = {}   # database models, built on first use

    def load(self, name: str, path: str, pattern: str | None = None) -> Tokenizer:
        """Load the tokenizer file `path` as `name`, reading only what DuckDB's file-access settings
        of this connection allow (`enable_external_access`, `allowed_directories`, `allowed_paths`);
        a name that a stored model has is refused (it would hide the model)."""
        if not isinstance(name, str) or not name or "\0" in name:
            raise SqltokError(f"a tokenizer needs a name without NUL bytes, not {name!r}")
        if not isinstance(path, str) or not path:
            raise SqltokError(f"sqltok_load({name!r}, path): the path must be a non-empty string")
        con = self._con()
        if name not in self._loaded and model_exists(con.cursor(), name):
            raise SqltokError(f"a model named {name!r} is stored in this database; load the file under "
                              "another name (or drop the model)")
        with file_access(_duckdb_may_read(con)):
            tok = Tokenizer.load(path, name=name, **({} if pattern is None else {"pattern": pattern}))
        self._loaded[name] = tok
        return tok

    def put(self, name: str, tok: Tokenizer) -> None:
        """Make `tok` known as `name` until `remove(name)` (training registers its phase-1 model so)."""
        self._loaded[name] = tok

    def remove(self, name: str) -> None:
        self._loaded.pop(name, None)

    def forget(self, name: str) -> None:
        """Drop a database model from the cache (after it was trained again, replaced or dropped)."""
        self._cached.pop(name, None)

    def get(self, name: str) -> Tokenizer:
        tok = self._loaded.get(name) or self._cached.get(name)
        if tok is not None:
            return tok
        con = self._con()
        try:
            tok = BPETokenizer.from_db(con.cursor(), name)
        except ModelNotFoundError:
            known = sorted(set(self._loaded) | set(self._cached))
            raise ModelNotFoundError(
                f"no tokenizer named {name!r}: load one with sqltok_load({name!r}, 'path') or train it; "
                f"loaded: {', '.join(known) if known else 'none'}") from None
        self._cached[name] = tok
        return tok


def _duckdb_may_read(con: duckdb.DuckDBPyConnection):
    """An access check that asks DuckDB whether `con` may read a file (its `read_blob` obeys the
    connection's file-access settings)."""
    def check(path: Path) -> None:
        try:
            con.cursor().execute("SELECT size FROM read_blob(?)", [str(path)]).fetchall()
        except duckdb.PermissionException:
            raise SqltokError(f"DuckDB's file-access settings do not allow reading {path} "
                              "(enable_external_access, allowed_directories, allowed_paths)") from None
        except duckdb.IOException:
            pass  # a missing or unreadable file: the reader says so
    return check


def named_tokenizers(con: duckdb.DuckDBPyConnection) -> NamedTokenizers:
    """The named tokenizers of `con`, created on first use."""
    reg = _by_connection.get(con)
    if reg is None:
        reg = _by_connection[con] = NamedTokenizers(con)
    return reg
