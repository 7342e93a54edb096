"""Models as tables: write a `Model` into the `sqltok_store` schema, read it back, list and drop models.

The lowest layer: it knows the tables and nothing above them. Callers wrap writes in one transaction
(see `transaction`), so a failed run leaves no half model. What a layer above keeps derived from a
model (the connection's cache of database tokenizers) subscribes with `on_model_change` and is told
whenever a model's rows are deleted, before it is written again or when it is dropped: every writer
goes through `delete_rows`, so no writer can forget to tell, and the store imports none of them.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.bpe.model import Merge, Model
from sqltok.duck import arrow_table, insert_arrow, transaction
from sqltok.errors import ModelExistsError, ModelNotFoundError, SqltokError
from sqltok.sql_files import run_script
from sqltok.store_migration import migrate

_MODEL_TABLES = ("models", "tokens", "merges", "special_tokens", "pretoken_counts", "candidate_counts",
                 "phase1_tokens", "model_files")
_listeners: list[Callable[[object, str], None]] = []
_creating = threading.Lock()  # two cursors creating the schema at once: one would meet a write conflict


def ensure_schema(con) -> None:
    """Create the `sqltok_store` schema and its tables when they are missing, and bring a store an
    earlier sqltok wrote up to date (see `store_migration`)."""
    with _creating:
        run_script(con, "schema")
        migrate(con)


def on_model_change(listener: Callable[[object, str], None]) -> None:
    """Call `listener(con, name)` whenever the rows of model `name` are deleted from `con`'s database
    (it is about to be written again, replaced or dropped)."""
    _listeners.append(listener)


def _has_store(con) -> bool:
    """True when the database holds sqltok's tables (read-only databases are never written to)."""
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'sqltok_store' "
                       "AND table_name = 'models'").fetchall()[0][0] > 0


def model_names(con) -> list[str]:
    """The names of the models in the database, sorted."""
    if not _has_store(con):
        return []
    return [r[0] for r in con.execute("SELECT model FROM sqltok_store.models ORDER BY model").fetchall()]


def model_exists(con, name: str) -> bool:
    if not _has_store(con):
        return False
    return con.execute("SELECT count(*) FROM sqltok_store.models WHERE model = ?", [name]).fetchall()[0][0] > 0


def require_model(con, name: str) -> None:
    """Raise ModelNotFoundError, listing the models there are, when `name` is not one of them."""
    if not model_exists(con, name):
        have = model_names(con)
        raise ModelNotFoundError(f"no model named {name!r} in this database; models: "
                                 + (", ".join(have) if have else "none (train or import one first)"))


def check_new_name(con, name: str, replace: bool) -> None:
    """Validate a model name about to be written; with `replace` an existing model may be overwritten."""
    if not isinstance(name, str) or not name.strip() or "\0" in name:
        raise SqltokError(f"a model needs a non-empty name without NUL bytes, not {name!r}")
    if model_exists(con, name) and not replace:
        raise ModelExistsError(f"a model named {name!r} exists already; choose another name or replace it "
                               "(replace=True, --replace)")


def delete_rows(con, name: str) -> None:
    """Delete every row of model `name` (the caller holds the transaction) and tell the listeners."""
    for listener in _listeners:
        listener(con, name)
    for t in _MODEL_TABLES:
        con.execute(f"DELETE FROM sqltok_store.{t} WHERE model = ?", [name])


def drop_model(con, name: str) -> None:
    """Remove model `name` from the database."""
    require_model(con, name)
    with transaction(con):
        delete_rows(con, name)


@dataclass(frozen=True)
class ModelRows:
    """A model as the rows `save_model_rows` writes: its method, settings, `tokens` (id, token, count,
    is_super), `merges` (is_super, idx, left_id, right_id, new_id, count, flag) and special tokens."""

    method: str
    settings: dict
    super_settings: dict | None
    tokens: pa.Table
    merges: pa.Table
    special_tokens: dict[str, int]

    @property
    def script_aware(self) -> bool:
        return self.settings.get("script_specific_regex") is not None


def _column(values, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """`values` (a list, numpy or Arrow array) as an Arrow array of `type_` (an Arrow array is cast,
    not converted through Python objects)."""
    return values.cast(type_) if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, type_)


def token_table(tokens, counts, is_super) -> pa.Table:
    """The `tokens` rows of a model: its tokens' bytes by id, their counts and whether each is a
    supermerge's (lists or Arrow arrays)."""
    return pa.table({"id": pa.array(np.arange(len(tokens), dtype=np.int32)), "token": _column(tokens, pa.binary()),
                     "count": _column(counts, pa.int64()), "is_super": _column(is_super, pa.bool_())})


def merge_table(is_super: bool, left, right, new_ids, counts, flags) -> pa.Table:
    """The `merges` rows of a model's merges (or supermerges), in order (lists or Arrow arrays)."""
    return pa.table({"is_super": pa.array(np.full(len(left), is_super)),
                     "idx": pa.array(np.arange(len(left), dtype=np.int32)),
                     "left_id": _column(left, pa.int32()), "right_id": _column(right, pa.int32()),
                     "new_id": _column(new_ids, pa.int32()), "count": _column(counts, pa.int64()),
                     "flag": _column(flags, pa.int8())})


def model_rows(model: Model) -> ModelRows:
    """`model` as the rows of its tables."""
    merges = pa.concat_tables([
        merge_table(is_super, [m.left for m in merges], [m.right for m in merges], model.new_ids(merges),
                    [m.count for m in merges], [m.flag for m in merges])
        for is_super, merges in ((False, model.merges), (True, model.supermerges))])
    return ModelRows(model.method, model.settings, model.super_settings,
                     token_table(model.tokens, model.token_counts, model.is_super), merges, model.special_tokens)


def save_model(con, name: str, model: Model, info: dict | None = None) -> None:
    """Insert `model` under `name` (the caller checks the name and holds the transaction).

    `info` may give `source`, `documents`, `null_documents`, `empty_documents`, `bytes` and
    `phase1_vocab_size`.
    """
    save_model_rows(con, name, model_rows(model), info)


def save_model_rows(con, name: str, rows: ModelRows, info: dict | None = None) -> None:
    """`save_model` for a model given as its rows."""
    info = info or {}
    con.execute(
        "INSERT INTO sqltok_store.models (model, method, vocab_size, script_aware, settings, super_settings, "
        "source, documents, null_documents, empty_documents, bytes, phase1_vocab_size) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [name, rows.method, rows.tokens.num_rows, rows.script_aware, json.dumps(rows.settings),
         None if rows.super_settings is None else json.dumps(rows.super_settings),
         info.get("source"), info.get("documents"), info.get("null_documents"),
         info.get("empty_documents"), info.get("bytes"), info.get("phase1_vocab_size")])
    insert_arrow(con, "sqltok_store.tokens", name, rows.tokens)
    insert_arrow(con, "sqltok_store.merges", name, rows.merges)
    if rows.special_tokens:
        insert_arrow(con, "sqltok_store.special_tokens", name, pa.table({
            "id": pa.array(list(rows.special_tokens.values()), pa.int32()),
            "token": pa.array(list(rows.special_tokens.keys()), pa.string()),
        }))


def save_pretoken_counts(con, name: str, table: str) -> None:
    """Insert the pretoken counts of work table `table(pretoken, n)` as model `name`'s."""
    con.execute(f"INSERT INTO sqltok_store.pretoken_counts SELECT ?, pretoken, n FROM {table}", [name])


def save_candidates(con, name: str, table: str, phase1_tokens, keys: bool = False) -> None:
    """Insert the supermerge candidates of work table `table(candidate, n)` (lists of ids of the
    phase-1 vocabulary `phase1_tokens`: bytes by id, a list or Arrow array; with `keys`, their keys)
    and that vocabulary as model `name`'s."""
    candidate = "sqltok_candidate_ids(candidate)" if keys else "candidate"
    con.execute(f"INSERT INTO sqltok_store.candidate_counts SELECT ?, {candidate}, n FROM {table}", [name])
    insert_arrow(con, "sqltok_store.phase1_tokens", name, pa.table({
        "id": pa.array(np.arange(len(phase1_tokens), dtype=np.int32)),
        "token": _column(phase1_tokens, pa.binary())}))


def _merges(rows: pa.Table) -> list[Merge]:
    cols = [rows.column(c).to_pylist() for c in ("left_id", "right_id", "count", "flag", "new_id")]
    return [Merge(*m) for m in zip(*cols)]


@dataclass(frozen=True)
class ModelFile:
    """A model kept whole as a file of one of `sqltok.formats.kind.KINDS`."""

    method: str
    kind: str
    content: bytes


def save_model_file(con, name: str, model: ModelFile, vocab_size: int, settings: dict,
                    info: dict | None = None) -> None:
    """Insert a model kept as a file under `name` (the caller checks the name and holds the
    transaction); `info` as for `save_model`."""
    info = info or {}
    con.execute(
        "INSERT INTO sqltok_store.models (model, method, vocab_size, script_aware, settings, source, documents, "
        "null_documents, empty_documents, bytes) VALUES (?, ?, ?, false, ?, ?, ?, ?, ?, ?)",
        [name, model.method, vocab_size, json.dumps(settings), info.get("source"), info.get("documents"),
         info.get("null_documents"), info.get("empty_documents"), info.get("bytes")])
    con.execute("INSERT INTO sqltok_store.model_files VALUES (?, ?, ?)", [name, model.kind, model.content])


def load_model_file(con, name: str) -> ModelFile | None:
    """Model `name` when it is kept as a file; None when it is a byte-level BPE model or no model."""
    if not _has_store(con):
        return None
    rows = con.execute("SELECT m.method, f.kind, f.content FROM sqltok_store.model_files f "
                       "JOIN sqltok_store.models m USING (model) WHERE model = ?", [name]).fetchall()
    return ModelFile(*rows[0]) if rows else None


def load_model(con, name: str) -> Model:
    """Read model `name` back from its tables (each merge with the `new_id` its row holds)."""
    require_model(con, name)
    kept = load_model_file(con, name)
    if kept is not None:
        raise SqltokError(f"model {name!r} is a {kept.method} model, not a byte-level BPE one")
    method, settings, super_settings = con.execute(
        "SELECT method, settings, super_settings FROM sqltok_store.models WHERE model = ?", [name]).fetchall()[0]
    tok = arrow_table(con, "SELECT token, count, is_super FROM sqltok_store.tokens WHERE model = ? ORDER BY id", [name])
    mg = arrow_table(con, "SELECT is_super, left_id, right_id, new_id, count, flag FROM sqltok_store.merges "
                          "WHERE model = ? ORDER BY is_super, idx", [name])
    special = arrow_table(con, "SELECT token, id FROM sqltok_store.special_tokens WHERE model = ? ORDER BY id", [name])
    return Model(
        method=method,
        tokens=tok.column("token").to_pylist(),
        token_counts=tok.column("count").to_pylist(),
        is_super=tok.column("is_super").to_pylist(),
        merges=_merges(mg.filter(pc.invert(mg.column("is_super")))),
        supermerges=_merges(mg.filter(mg.column("is_super"))),
        settings=json.loads(settings),
        super_settings=None if super_settings is None else json.loads(super_settings),
        special_tokens=dict(zip(special.column("token").to_pylist(), special.column("id").to_pylist())),
    )


def load_phase1_tokens(con, name: str) -> list[bytes]:
    """The phase-1 vocabulary the stored candidates of model `name` are ids of (by id)."""
    return arrow_table(con, "SELECT token FROM sqltok_store.phase1_tokens WHERE model = ? ORDER BY id",
                       [name]).column("token").to_pylist()
