"""Which tokenizers a DuckDB database instance knows by name: loaded from files (`sqltok_load`) or the
models stored in its database (loaded on first use, forgotten when a model is rewritten).

One set per database instance, shared by every registered connection to it in this process: a
connection, its cursors (what DuckDB recommends for threads) and other connections to the same
database file. sqltok's SQL functions are defined once per instance and serve them all; the
instance knows its set through the SQL function `sqltok_instance()`.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from pathlib import Path

import duckdb

from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.errors import ModelNotFoundError, SqltokError
from sqltok.formats.files import file_access
from sqltok.store import load_model_file, model_exists, on_model_change
from sqltok.tokenizer import Tokenizer

_by_connection: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, NamedTokenizers]" = weakref.WeakKeyDictionary()
_by_key: dict[str, NamedTokenizers] = {}
_keys = itertools.count()
_lock = threading.Lock()


class NamedTokenizers:
    """Tokenizers by name for one database instance."""

    def __init__(self) -> None:
        self.key = f"sqltok-{next(_keys)}"
        self._connections: list[weakref.ref] = []
        self._loaded: dict[str, Tokenizer] = {}   # from files: these win over database models
        self._cached: dict[str, Tokenizer] = {}   # database models, built on first use

    def attach(self, con: duckdb.DuckDBPyConnection) -> None:
        """`con` is a registered connection to the instance (models are read through one of them)."""
        self._connections = [r for r in self._connections if r() is not None] + [weakref.ref(con, self._collected)]

    def _collected(self, _: weakref.ref) -> None:
        """A registered connection was collected: when it was the last, the tokenizers go with it (a
        process that opens database after database keeps none of theirs), and a connection still
        open on the instance must register again (see `_cursor`). No lock: the collector may run
        this on a thread that holds one."""
        if not any(r() is not None for r in self._connections):
            self._loaded.clear()
            self._cached.clear()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of an open registered connection; when none is left, the loaded tokenizers are
        let go and using the functions needs `sqltok.register(con)` again."""
        for ref in self._connections:
            con = ref()
            if con is None:
                continue
            try:
                return con.cursor()
            except duckdb.ConnectionException:  # closed
                continue
        self._loaded.clear()
        self._cached.clear()
        raise SqltokError("every connection sqltok was registered on is closed: call sqltok.register(con) "
                          "on the connection you use")

    def load(self, name: str, path: str, pattern: str | None = None) -> Tokenizer:
        """Load the tokenizer file `path` as `name`, reading only what DuckDB's file-access settings
        of this connection allow (`enable_external_access`, `allowed_directories`, `allowed_paths`);
        a name that a stored model has is refused (it would hide the model)."""
        if not isinstance(name, str) or not name or "\0" in name:
            raise SqltokError(f"a tokenizer needs a name without NUL bytes, not {name!r}")
        if not isinstance(path, str) or not path:
            raise SqltokError(f"sqltok_load({name!r}, path): the path must be a non-empty string")
        con = self._cursor()
        if name not in self._loaded and model_exists(con, name):
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
        try:
            cur = self._cursor()
            kept = load_model_file(cur, name)
            tok = Tokenizer.from_stored(kept.kind, kept.content, name) if kept else BPETokenizer.from_db(cur, name)
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
            con.execute("SELECT size FROM read_blob(?)", [str(path)]).fetchall()
        except duckdb.PermissionException:
            raise SqltokError(f"DuckDB's file-access settings do not allow reading {path} "
                              "(enable_external_access, allowed_directories, allowed_paths)") from None
        except duckdb.IOException:
            pass  # a missing or unreadable file: the reader says so
    return check


def named_tokenizers(con: duckdb.DuckDBPyConnection) -> NamedTokenizers:
    """The named tokenizers of `con`'s database instance: those its `sqltok_instance()` names, else
    a new set (which `sqltok.register` then defines the SQL functions with)."""
    reg = _by_connection.get(con)
    if reg is not None:
        return reg
    with _lock:
        key = instance_key(con)
        reg = _by_key.get(key) if key is not None else None
        if reg is None:
            reg = NamedTokenizers()
            _by_key[reg.key] = reg
        reg.attach(con)
        _by_connection[con] = reg
    return reg


def instance_key(con: duckdb.DuckDBPyConnection) -> str | None:
    """The key of the tokenizers the instance's SQL functions use, or None before sqltok defined them."""
    # Asked without a failing query: a failed statement would abort the caller's transaction.
    if not con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'sqltok_instance'"
                       ).fetchall()[0][0]:
        return None
    return con.execute("SELECT sqltok_instance()").fetchall()[0][0]


on_model_change(lambda con, name: named_tokenizers(con).forget(name))  # a rewritten model is not served stale
