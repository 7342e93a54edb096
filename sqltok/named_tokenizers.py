"""Which tokenizers a DuckDB connection knows by name: loaded from files (`sqltok_load`) or the models
stored in its database (loaded on first use, dropped from the cache when a model is rewritten)."""
from __future__ import annotations

import weakref

import duckdb

from sqltok.errors import ModelNotFoundError
from sqltok.bpe.tokenizer import Tokenizer
from sqltok.store import on_model_change

_registries: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, NamedTokenizers]" = weakref.WeakKeyDictionary()


class NamedTokenizers:
    """Tokenizers by name for one connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = weakref.ref(con)
        self._loaded: dict[str, Tokenizer] = {}   # from files: these win over database models
        self._cached: dict[str, Tokenizer] = {}   # database models, built on first use

    def load(self, name: str, path: str, pattern: str | None = None) -> Tokenizer:
        tok = Tokenizer.load(path, name=name, pattern=pattern)
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
            tok = Tokenizer.from_db(con.cursor(), name)
        except ModelNotFoundError:
            known = sorted(set(self._loaded) | set(self._cached))
            raise ModelNotFoundError(
                f"no tokenizer named {name!r}: load one with sqltok_load({name!r}, 'path') or train it; "
                f"loaded: {', '.join(known) if known else 'none'}") from None
        self._cached[name] = tok
        return tok


def named_tokenizers(con: duckdb.DuckDBPyConnection) -> NamedTokenizers:
    """The named tokenizers of `con`, created on first use."""
    reg = _registries.get(con)
    if reg is None:
        reg = _registries[con] = NamedTokenizers(con)
    return reg


on_model_change(lambda con, name: named_tokenizers(con).forget(name))  # a rewritten model is not served stale
