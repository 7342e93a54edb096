"""Models as tables: write a `Model` into the `sqltok` schema, read it back, list and drop models.

Callers wrap writes in one transaction (see `transaction`), so a failed run leaves no half model.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Iterator

import pyarrow as pa

from sqltok.duck import arrow_table
from sqltok.errors import ModelExistsError, ModelNotFoundError, SqltokError
from sqltok.bpe.model import Merge, Model
from sqltok.sql_files import run_script


def ensure_schema(con) -> None:
    """Create the `sqltok` schema and its tables when they are missing."""
    run_script(con, "schema")


@contextmanager
def transaction(con) -> Iterator[None]:
    """BEGIN ... COMMIT, or ROLLBACK when the block raises (KeyboardInterrupt included)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


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
    if not isinstance(name, str) or not name.strip():
        raise SqltokError("a model needs a non-empty name")
    if model_exists(con, name) and not replace:
        raise ModelExistsError(f"a model named {name!r} exists already; choose another name or replace it "
                               "(replace=True, --replace)")


_MODEL_TABLES = ("models", "tokens", "merges", "special_tokens", "pretoken_counts", "candidate_counts")


def delete_rows(con, name: str) -> None:
    """Delete every row of model `name` (the caller holds the transaction); a tokenizer cached for
    it is forgotten."""
    from sqltok.named_tokenizers import named_tokenizers

    named_tokenizers(con).forget(name)
    for t in _MODEL_TABLES:
        con.execute(f"DELETE FROM sqltok_store.{t} WHERE model = ?", [name])


def drop_model(con, name: str) -> None:
    """Remove model `name` from the database."""
    require_model(con, name)
    with transaction(con):
        delete_rows(con, name)


def _insert_arrow(con, table: str, name: str, data: pa.Table) -> None:
    con.register("__sqltok_rows", data)
    try:
        cols = ", ".join(data.column_names)
        con.execute(f"INSERT INTO sqltok_store.{table} (model, {cols}) SELECT ?, {cols} FROM __sqltok_rows", [name])
    finally:
        con.unregister("__sqltok_rows")


def _merge_rows(merges: list[Merge], is_super: bool, tokens: list[bytes], ids: dict[bytes, int]) -> pa.Table:
    return pa.table({
        "is_super": pa.array([is_super] * len(merges), pa.bool_()),
        "idx": pa.array(range(len(merges)), pa.int32()),
        "left_id": pa.array([m.left for m in merges], pa.int32()),
        "right_id": pa.array([m.right for m in merges], pa.int32()),
        "new_id": pa.array([ids[tokens[m.left] + tokens[m.right]] for m in merges], pa.int32()),
        "count": pa.array([m.count for m in merges], pa.int64()),
        "flag": pa.array([m.flag for m in merges], pa.int8()),
    })


def save_model(con, name: str, model: Model, info: dict | None = None) -> None:
    """Insert `model` under `name` (the caller checks the name and holds the transaction).

    `info` may give `source`, `documents`, `null_documents`, `empty_documents`, `bytes` and
    `phase1_vocab_size`.
    """
    info = info or {}
    con.execute(
        "INSERT INTO sqltok_store.models (model, method, vocab_size, script_aware, settings, super_settings, "
        "source, documents, null_documents, empty_documents, bytes, phase1_vocab_size) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [name, model.method, model.vocab_size, model.script_aware, json.dumps(model.settings),
         None if model.super_settings is None else json.dumps(model.super_settings),
         info.get("source"), info.get("documents"), info.get("null_documents"),
         info.get("empty_documents"), info.get("bytes"), info.get("phase1_vocab_size")])
    _insert_arrow(con, "tokens", name, pa.table({
        "id": pa.array(range(model.vocab_size), pa.int32()),
        "token": pa.array(model.tokens, pa.binary()),
        "count": pa.array(model.token_counts, pa.int64()),
        "is_super": pa.array(model.is_super, pa.bool_()),
    }))
    ids = {t: i for i, t in enumerate(model.tokens)}
    _insert_arrow(con, "merges", name, _merge_rows(model.merges, False, model.tokens, ids))
    if model.supermerges:
        _insert_arrow(con, "merges", name, _merge_rows(model.supermerges, True, model.tokens, ids))
    if model.special_tokens:
        _insert_arrow(con, "special_tokens", name, pa.table({
            "id": pa.array(list(model.special_tokens.values()), pa.int32()),
            "token": pa.array(list(model.special_tokens.keys()), pa.string()),
        }))


def load_model(con, name: str) -> Model:
    """Read model `name` back from its tables."""
    require_model(con, name)
    method, settings, super_settings = con.execute(
        "SELECT method, settings, super_settings FROM sqltok_store.models WHERE model = ?", [name]).fetchall()[0]
    tok = arrow_table(con, "SELECT token, count, is_super FROM sqltok_store.tokens WHERE model = ? ORDER BY id", [name])
    mg = con.execute("SELECT is_super, left_id, right_id, count, flag FROM sqltok_store.merges WHERE model = ? "
                     "ORDER BY is_super, idx", [name]).fetchall()
    special = con.execute("SELECT token, id FROM sqltok_store.special_tokens WHERE model = ? ORDER BY id",
                          [name]).fetchall()
    return Model(
        method=method,
        tokens=tok.column("token").to_pylist(),
        token_counts=tok.column("count").to_pylist(),
        is_super=tok.column("is_super").to_pylist(),
        merges=[Merge(l, r, c, f) for s, l, r, c, f in mg if not s],
        supermerges=[Merge(l, r, c, f) for s, l, r, c, f in mg if s],
        settings=json.loads(settings),
        super_settings=None if super_settings is None else json.loads(super_settings),
        special_tokens=dict(special),
    )
