"""Training as stages: one object owns a run's work tables and drops them however the run ends; the
counting stage's result; candidates kept as phase-1 ids and reused; load_model's stored new ids."""
from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqltok
import sqltok.bpe.superword as superword
import sqltok.bpe.train as train
from sqltok.bpe.reference_file import dumps
from sqltok.named_tokenizers import named_tokenizers
from sqltok.training.counting import count_units, pretoken_units
from sqltok.training.work_tables import WorkTables

STORE_TABLES = ("models", "tokens", "merges", "special_tokens", "pretoken_counts", "candidate_counts",
                "phase1_tokens")
DOCS = ["the cat sat on the mat and the cat ran", "the cat sat on the mat", "of the people, by the people"]


def _store(con) -> dict:
    return {t: con.execute(f"SELECT * FROM sqltok_store.{t} ORDER BY ALL").fetchall() for t in STORE_TABLES}


def _work_left(con) -> list:
    """TEMP tables and registered Arrow views of this connection."""
    return con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary UNION ALL "
                       "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal").fetchall()


@pytest.fixture()
def docs(con):
    con.execute("CREATE TABLE docs AS SELECT unnest(?) AS text FROM range(10)", [DOCS])
    return "SELECT text FROM docs"


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_work_tables_are_dropped_however_the_block_ends(con, failure):
    with pytest.raises(failure):
        with WorkTables(con) as work:
            con.execute(f"CREATE TEMP TABLE {work.table('a')} AS SELECT 1 AS x")
            work.view("v", pa.table({"x": [1, 2]}))
            con.execute(f"CREATE TEMP TABLE {work.table('b')} AS SELECT x FROM {work.table('a')}")
            assert len(_work_left(con)) == 3
            raise failure("a stage failed")
    assert _work_left(con) == []
    with WorkTables(con) as work:
        work.table("never_created")  # a name handed out for a table a failed stage never made
    assert _work_left(con) == []


# Each stage of a superword run, made to fail after it ran (so that its work tables exist).
REUSE = {"phase1": "kept", "method": "superbpe", "supermerges": 30}
SUPERWORD_STAGES = [("count_corpus", {}), ("reuse_pretoken_counts", REUSE), ("reuse_candidates", REUSE),
                    ("merge_pretokens", {}), ("count_candidates", {}),
                    ("run_phase2", {"method": "superbpe", "supermerges": "match"}),
                    ("resplit_candidates", {"method": "superbpe", "supermerges": "match"}),
                    ("split_candidates", {"greedy_split": True}), ("save_candidates", {}), ("phase2_rows", {}),
                    ("save_model_rows", {})]


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("stage,options", SUPERWORD_STAGES)
def test_a_failing_superword_stage_leaves_no_work_table(con, docs, monkeypatch, failure, stage, options):
    sqltok.train_superword(con, docs, 270, "kept")
    before = _store(con)
    real = getattr(superword, stage)

    def run_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise failure(f"{stage} failed")

    monkeypatch.setattr(superword, stage, run_then_fail)
    with pytest.raises(failure):
        sqltok.train_superword(con, docs, 280, "kept", replace=True, **options)
    assert _work_left(con) == []
    assert _store(con) == before
    assert not [n for n in named_tokenizers(con)._loaded if n.startswith("__sqltok_phase1")]  # gone too


@pytest.mark.parametrize("stage", ["count_corpus", "merge_pretokens", "merges_rows", "save_pretoken_counts",
                                   "save_model_rows"])
def test_a_failing_bpe_stage_leaves_no_work_table(con, docs, monkeypatch, stage):
    sqltok.train_bpe(con, docs, 260, "kept")
    before = _store(con)
    real = getattr(train, stage)

    def run_then_interrupt(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(train, stage, run_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        sqltok.train_bpe(con, docs, 270, "kept", replace=True)
    assert _work_left(con) == [] and _store(con) == before


def test_counting_gives_a_table_and_its_sizes(con, docs):
    with WorkTables(con) as work:
        counts = count_units(con, docs, pretoken_units(True), work.table("pretoken_counts"))
        got = dict(zip(*counts.arrow(con).to_pydict().values()))
    expected: dict[str, int] = {}
    for text in DOCS * 10:
        for p in sqltok.pretokenize(text):
            expected[p] = expected.get(p, 0) + 1
    assert got == expected
    assert (counts.unique, counts.total, counts.column) == (len(expected), sum(expected.values()), "pretoken")


def test_candidates_are_stored_as_phase1_ids(con, docs):
    sqltok.train_superword(con, docs, 290, "bl")
    tokens = dict(con.execute("SELECT id, token FROM sqltok_store.phase1_tokens WHERE model = 'bl'").fetchall())
    assert 243 < len(tokens) <= con.execute("SELECT phase1_vocab_size FROM sqltok_store.models").fetchall()[0][0]
    ids = con.execute("SELECT candidate, n FROM sqltok_store.candidate_counts WHERE model = 'bl'").fetchall()
    text = con.execute("SELECT candidate, n FROM sqltok_candidate_counts('bl')").fetchall()
    assert sorted(([tokens[u].decode() for u in c], n) for c, n in ids) == sorted(text)
    assert (["the", " cat", " sat", " on", " the", " mat"], 10) in text


@pytest.mark.parametrize("options", [{}, {"method": "superbpe", "supermerges": "match"},
                                     {"method": "superbpe", "supermerges": 40}, {"greedy_split": True}])
def test_phase1_reuse_gives_the_models_a_corpus_pass_gives(con, train_dir, options):
    src = sqltok.Source(path=str(train_dir / "en_train.jsonl.zst"), max_documents=3000)
    sqltok.train_superword(con, src, 1500, "first", simple=True)
    sqltok.train_superword(con, src, 1500, "direct", simple=True, **options)
    rep = sqltok.train_superword(con, None, 1500, "reused", phase1="first", **options)
    assert rep.supermerges > 0 and rep.documents == 3000
    assert dumps(sqltok.load_model(con, "reused")) == dumps(sqltok.load_model(con, "direct"))
    assert _candidates(con, "reused") == _candidates(con, "direct")


def _candidates(con, name: str) -> list:
    return con.execute("SELECT candidate, n FROM sqltok_candidate_counts(?) ORDER BY ALL", [name]).fetchall()


def test_reuse_refuses_simple_for_script_aware_counts(con, docs):
    """simple=True cannot be honoured from counts of script runs: it was ignored, giving a script-aware model."""
    sqltok.train_superword(con, docs, 290, "bl")
    with pytest.raises(sqltok.SqltokError, match="'bl' counted its pretokens in runs of one script"):
        sqltok.train_superword(con, None, 290, "again", phase1="bl", simple=True)
    assert "again" not in sqltok.model_names(con)
    sqltok.train_superword(con, docs, 290, "simple", simple=True)
    assert not sqltok.load_model(con, sqltok.train_superword(
        con, None, 290, "reused", phase1="simple", simple=True).model).script_aware


def test_reuse_refuses_counts_that_no_longer_give_its_phase1_model(con, docs):
    sqltok.train_superword(con, docs, 290, "bl")
    con.execute("INSERT INTO sqltok_store.pretoken_counts VALUES ('bl', ' xyzzy', 1000)")
    with pytest.raises(sqltok.SqltokError, match="not the one its candidates were extracted with"):
        sqltok.train_superword(con, None, 290, "again", phase1="bl")


def test_load_model_takes_the_stored_new_ids(con, docs):
    sqltok.train_superword(con, docs, 290, "bl")
    con.execute("UPDATE sqltok_store.merges SET new_id = new_id + 0 WHERE model = 'bl'")
    model = sqltok.load_model(con, "bl")
    stored = con.execute("SELECT new_id FROM sqltok_store.merges WHERE model = 'bl' ORDER BY is_super, idx").fetchall()
    assert [m.new_id for m in model.merges + model.supermerges] == [i for (i,) in stored]
    assert model.new_ids(model.merges) == [i for (i,) in stored[:len(model.merges)]]
    by_bytes = sqltok.Model(method=model.method, tokens=model.tokens, token_counts=model.token_counts,
                            is_super=model.is_super, settings=model.settings,
                            merges=[sqltok.Merge(m.left, m.right, m.count, m.flag) for m in model.merges])
    assert by_bytes.new_ids(by_bytes.merges) == model.new_ids(model.merges)
    mixed = [by_bytes.merges[0]] + model.merges[1:]
    assert by_bytes.new_ids(mixed) == model.new_ids(model.merges)
    assert by_bytes.merges == model.merges  # merges compare without new_id, which the tokens determine


def test_a_rewritten_model_is_not_served_from_the_cache(con, docs):
    sqltok.train_bpe(con, docs, 250, "m")
    before = con.execute("SELECT tokens('m', 'the cat sat on the mat')").fetchall()[0][0]
    sqltok.train_superword(con, docs, 290, "m", replace=True)
    after = con.execute("SELECT tokens('m', 'the cat sat on the mat')").fetchall()[0][0]
    assert len(before) > 1 and after == ["the cat sat on the mat"]
    sqltok.drop_model(con, "m")
    with pytest.raises(duckdb.Error, match="no tokenizer named 'm'"):
        con.execute("SELECT tokens('m', 'the cat')")
