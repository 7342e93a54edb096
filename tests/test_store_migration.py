"""A store written with candidates as pretoken text (the previous schema) is converted by
`ensure_schema` to phase-1 ids, in one transaction, and then serves as a store written now does."""
from __future__ import annotations

import duckdb
import pytest

import sqltok
import sqltok.store_migration as store_migration
from sqltok.bpe.reference_file import dumps

# The previous schema's candidate table, by hand: each candidate a list of pretoken strings.
OLD_CANDIDATE_TABLE = """
CREATE TABLE sqltok_store.candidate_counts (
    model     VARCHAR NOT NULL,
    candidate VARCHAR[] NOT NULL,
    n         BIGINT NOT NULL
)"""


def _candidate_type(con) -> str:
    return con.execute("SELECT data_type FROM duckdb_columns() WHERE schema_name = 'sqltok_store' AND "
                       "table_name = 'candidate_counts' AND column_name = 'candidate'").fetchall()[0][0]


def _rows(con, table: str) -> list:
    return con.execute(f"SELECT * FROM sqltok_store.{table} ORDER BY ALL").fetchall()


@pytest.fixture(scope="module")
def old_store(tmp_path_factory, train_dir):
    """(path of a database in the previous schema, what the current schema held for it, the model
    a reuse of its candidates gave)."""
    path = str(tmp_path_factory.mktemp("old") / "old.duckdb")
    src = sqltok.Source(path=str(train_dir / "en_train.jsonl.zst"), max_documents=2000)
    with duckdb.connect(path) as c:
        sqltok.register(c)
        sqltok.train_superword(c, src, 1200, "bl", simple=True)
        sqltok.train_superword(c, src, 1200, "sb", method="superbpe", supermerges=30)
        sqltok.train_superword(c, src, 1100, "unsized", simple=True)
        sqltok.train_superword(c, None, 1200, "reused", method="superbpe", supermerges="match", phase1="bl")
        current = {t: _rows(c, t) for t in ("candidate_counts", "phase1_tokens")}
        current["text"] = {m: _text(c, m) for m in ("bl", "sb")}
        reused = dumps(sqltok.load_model(c, "reused"))
        c.execute("CREATE TABLE text_candidates AS " + " UNION ALL ".join(
            f"SELECT '{m}' AS model, candidate, n FROM sqltok_candidate_counts('{m}')" for m in sqltok.model_names(c)))
        c.execute("DROP TABLE sqltok_store.candidate_counts")
        c.execute("DROP TABLE sqltok_store.phase1_tokens")
        c.execute(OLD_CANDIDATE_TABLE)
        c.execute("INSERT INTO sqltok_store.candidate_counts SELECT * FROM text_candidates")
        c.execute("DROP TABLE text_candidates")
        # Written before the phase-1 size was recorded: its candidates cannot be interpreted.
        c.execute("UPDATE sqltok_store.models SET phase1_vocab_size = NULL WHERE model = 'unsized'")
    return path, current, reused


def _text(con, model: str) -> list:
    return con.execute("SELECT candidate, n FROM sqltok_candidate_counts(?) ORDER BY ALL", [model]).fetchall()


def _copy(path: str, tmp_path) -> str:
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(open(path, "rb").read())
    return str(copy)


@pytest.mark.parametrize("failure", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_migration_leaves_the_old_store(old_store, tmp_path, monkeypatch, failure):
    path = _copy(old_store[0], tmp_path)
    with duckdb.connect(path) as c:
        before = _rows(c, "candidate_counts")
    real = store_migration._save_phase1_tokens
    calls = []

    def save_then_fail(*args):
        real(*args)
        calls.append(args[1])
        if len(calls) == 2:
            raise failure("interrupted")

    monkeypatch.setattr(store_migration, "_save_phase1_tokens", save_then_fail)
    with duckdb.connect(path) as c:
        with pytest.raises(failure):
            sqltok.register(c)
        assert _candidate_type(c) == "VARCHAR[]" and _rows(c, "candidate_counts") == before
        assert _rows(c, "phase1_tokens") == []


def test_migration_gives_the_current_store(old_store, tmp_path):
    path, current, reused = old_store
    path = _copy(path, tmp_path)
    with duckdb.connect(path) as c:
        assert _candidate_type(c) == "VARCHAR[]"
        sqltok.register(c)
        assert _candidate_type(c) == "INTEGER[]"
        kept = {t: [r for r in current[t] if r[0] != "unsized"] for t in ("candidate_counts", "phase1_tokens")}
        assert {t: _rows(c, t) for t in kept} == kept
        assert {m: _text(c, m) for m in ("bl", "sb")} == current["text"]
        assert _text(c, "unsized") == []
        sqltok.train_superword(c, None, 1200, "again", method="superbpe", supermerges="match", phase1="bl")
        assert dumps(sqltok.load_model(c, "again")) == reused
    with duckdb.connect(path) as c:  # a current store: nothing to do
        sqltok.register(c)
        assert _candidate_type(c) == "INTEGER[]" and _text(c, "bl") == current["text"]["bl"]


def test_candidates_the_counts_do_not_explain_are_refused(old_store, tmp_path):
    path = _copy(old_store[0], tmp_path)
    with duckdb.connect(path) as c:
        c.execute("INSERT INTO sqltok_store.candidate_counts VALUES ('bl', ['never', ' seen'], 3)")
        with pytest.raises(sqltok.SqltokError, match="candidates of model 'bl'"):
            sqltok.register(c)
        assert _candidate_type(c) == "VARCHAR[]"


def test_read_only_old_store_says_to_open_it_writable(old_store, tmp_path):
    """A read-only connection cannot convert the store: register said "Table with name phase1_tokens
    does not exist!" (a CatalogException), now what to do."""
    path = _copy(old_store[0], tmp_path)
    with duckdb.connect(path, read_only=True) as c:
        with pytest.raises(sqltok.SqltokError, match="earlier sqltok.*open it once without read_only"):
            sqltok.register(c)
    with duckdb.connect(path) as c:
        sqltok.register(c)
    with duckdb.connect(path, read_only=True) as c:
        sqltok.register(c)
        assert _text(c, "bl") == old_store[1]["text"]["bl"]
