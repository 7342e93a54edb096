"""The `sqltok` command line: train, export, import, list, drop, and clear errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from sqltok.cli import main, sample_path


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "docs.jsonl"
    docs = ["The quick brown fox jumps over the lazy dog.", "It's 2026; the fox isn't lazy!", "Ünïcödé wörds"]
    path.write_text("".join(json.dumps({"body": d}) + "\n" for d in docs * 20), encoding="utf-8")
    return path


def test_train_export_import_roundtrip(tmp_path, corpus, capsys):
    db = str(tmp_path / "w.duckdb")
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "m",
                 "--db", db, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "model 'm'" in out and "first merges" in out and "60 used" in out
    model_file = tmp_path / "m.model"
    assert main(["export", "m", "--db", db, "-o", str(model_file)]) == 0
    assert model_file.read_text(encoding="utf-8").startswith("BoundlessBPE v2 word\n")
    assert main(["import", str(model_file), "--model", "again", "--db", db]) == 0
    again = tmp_path / "again.model"
    assert main(["export", "again", "--db", db, "-o", str(again)]) == 0
    assert again.read_bytes() == model_file.read_bytes()
    capsys.readouterr()
    assert main(["models", "--db", db]) == 0
    assert [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()] == ["again", "m"]
    assert main(["drop", "again", "--db", db]) == 0


def test_hf_export_of_simple_model_loads_in_tokenizers(tmp_path, corpus):
    tokenizers = pytest.importorskip("tokenizers")
    db = str(tmp_path / "w.duckdb")
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "s",
                 "--simple", "--db", db, "--no-progress"]) == 0
    assert main(["export", "s", "--db", db, "--format", "hf", "-o", str(tmp_path / "tokenizer.json")]) == 0
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = "The quick brown fox isn't lazy."
    assert tok.decode(tok.encode(text).ids) == text


def test_script_aware_hf_export_is_refused_clearly(tmp_path, corpus, capsys):
    db = str(tmp_path / "w.duckdb")
    main(["train", str(corpus), "--text-key", "body", "--vocab-size", "280", "--model", "sa", "--db", db,
          "--no-progress"])
    assert main(["export", "sa", "--db", db, "--format", "hf", "-o", str(tmp_path / "t.json")]) == 2
    assert "script" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["train", "missing.jsonl", "--vocab-size", "300", "--model", "m"], "no such file"),
    (["train", "--sql", "SELECT 'a' AS text", "--vocab-size", "100", "--model", "m"], "at least 243"),
    (["export", "ghost", "-o", "x.model"], "no model named 'ghost'"),
    (["train", "--vocab-size", "300", "--model", "m"], "give one source"),
    # a flag of another method is refused, not ignored
    (["train", "--sql", "SELECT 'a b' AS text", "--method", "unigram", "--vocab-size", "10", "--model", "m",
      "--special-tokens", "<a>"], "--control-symbols"),
    (["train", "--sql", "SELECT 'a b' AS text", "--method", "unigram", "--vocab-size", "10", "--model", "m",
      "--simple"], "--simple is for the byte-level BPE methods"),
    (["train", "--sql", "SELECT 'a b' AS text", "--method", "unigram", "--vocab-size", "10", "--model", "m",
      "--supermerges", "5"], "--supermerges needs"),
    (["train", "--sql", "SELECT 'a b' AS text", "--method", "wordpiece", "--vocab-size", "10", "--model", "m",
      "--user-defined-symbols", "x"], "a flag of --method unigram, not of --method wordpiece"),
    (["train", "--sql", "SELECT 'a b' AS text", "--vocab-size", "300", "--model", "m", "--byte-fallback"],
     "a flag of --method unigram, not of --method bpe"),
])
def test_errors_are_clear_and_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    duckdb.connect("sqltok.duckdb").close()
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["train", "docs.jsonl", "--lines", "--vocab-size", "300", "--model", "m"],
     "docs.jsonl (JSONL) has a document per row ('text' field): text_mode 'line' (--lines)"),
    (["train", "docs.jsonl", "--whole-file", "--vocab-size", "300", "--model", "m"],
     "(--whole-file) is for plain text"),
    (["encode", "--model", "m", "--input", "docs.parquet", "--lines", "--output", "out.parquet"],
     "docs.parquet (Parquet) has a document per row"),
    (["train", "--sql", "SELECT 'a b' AS text", "--lines", "--vocab-size", "300", "--model", "m"],
     "a SQL query has a document per row"),
    (["prepare", "docs.jsonl", "docs.parquet", "--lines", "-o", "p"], "docs.jsonl (JSONL) has a document per row"),
])
def test_plain_text_options_on_rows_are_refused(tmp_path, monkeypatch, capsys, argv, message):
    """--lines and --whole-file say how a plain text file holds documents; on JSONL, Parquet, a table
    or a query, whose documents are rows, they were ignored without a word (--whole-file even read a
    JSONL file as one text document)."""
    monkeypatch.chdir(tmp_path)
    duckdb.connect("sqltok.duckdb").close()
    (tmp_path / "docs.jsonl").write_text('{"text": "hello world"}\n{"text": "more text"}\n')
    duckdb.sql("COPY (SELECT 'hello world' AS text) TO 'docs.parquet'")
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_existing_model_needs_replace(tmp_path, corpus, capsys):
    db = str(tmp_path / "w.duckdb")
    args = ["train", str(corpus), "--text-key", "body", "--vocab-size", "260", "--model", "m", "--db", db,
            "--no-progress"]
    assert main(args) == 0
    assert main(args) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(args + ["--replace"]) == 0


def test_bundled_sample_and_holdout(tmp_path, capsys):
    db = str(tmp_path / "w.duckdb")
    assert main(["train", sample_path(), "--vocab-size", "1000", "--model", "demo", "--holdout", "0.1",
                 "--max-documents", "500", "--db", db, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "held-back documents" in out and "bytes per token" in out


def test_holdout_names_the_source_not_the_split_query(tmp_path, capsys):
    """The model records, and errors name, the file: not the query that splits it."""
    db, one = str(tmp_path / "w.duckdb"), tmp_path / "one.jsonl"
    one.write_text(json.dumps({"text": "only one document"}) + "\n", encoding="utf-8")
    assert main(["train", str(one), "--vocab-size", "250", "--model", "m", "--holdout", "0.99", "--db", db]) == 2
    err = capsys.readouterr().err
    assert f"'{one} without 0.99 held back' has no non-empty documents" in err and "sqltok_split" not in err
    assert main(["train", str(one), "--vocab-size", "250", "--model", "m", "--holdout", "0.01", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "held-back documents (1%): none (the split held back no non-empty document)" in out and "nan" not in out
    assert main(["drop", "m", "--db", db]) == 0
    assert main(["train", sample_path(), "--vocab-size", "300", "--model", "m", "--holdout", "0.1",
                 "--max-documents", "200", "--db", db]) == 0
    with duckdb.connect(db) as c:
        assert c.execute("SELECT source FROM sqltok_store.models").fetchall() == \
            [(f"{sample_path()} without 0.1 held back",)]


def test_phase1_with_holdout_needs_counts_without_the_held_back_documents(tmp_path, capsys):
    """--phase1 reuses stored counts: with --holdout they must be of the training side only, or the
    held-back documents were trained on and their compression is no holdout."""
    db, sample = str(tmp_path / "w.duckdb"), sample_path()
    common = ["--vocab-size", "500", "--max-documents", "200", "--db", db, "--no-progress"]
    superbpe = ["--method", "superbpe", "--supermerges", "20", "--holdout", "0.1", "--model", "s"]
    assert main(["train", sample, "--method", "boundless", "--model", "whole"] + common) == 0
    assert main(["train", sample, "--method", "boundless", "--model", "part", "--holdout", "0.1"] + common) == 0
    capsys.readouterr()
    assert main(["train", sample, "--phase1", "whole"] + superbpe + common) == 2
    assert "--phase1 whole reuses the counts of" in capsys.readouterr().err
    assert main(["train", sample, "--phase1", "part"] + superbpe + common) == 0
    assert "held-back documents (10%)" in capsys.readouterr().out
    with duckdb.connect(db) as c:
        assert c.execute("SELECT documents, source FROM sqltok_store.models WHERE model = 's'").fetchall() == \
            c.execute("SELECT documents, source FROM sqltok_store.models WHERE model = 'part'").fetchall()


def test_console_script_runs(tmp_path):
    import sqltok

    env = dict(os.environ, PYTHONPATH=str(Path(sqltok.__file__).parents[1]))
    out = subprocess.run([sys.executable, "-m", "sqltok.cli", "sample"], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0 and out.stdout.strip().endswith("sample_en.jsonl.zst")


def test_encode_command_writes_ids(tmp_path, corpus, capsys):
    db = str(tmp_path / "w.duckdb")
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "m",
                 "--db", db, "--no-progress"]) == 0
    out, counts = tmp_path / "ids.parquet", tmp_path / "n.parquet"
    assert main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body", "--output", str(out),
                 "--keep-columns", "body", "--db", db]) == 0
    assert "60 rows" in capsys.readouterr().out
    assert main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body", "--output",
                 str(counts), "--count", "--db", db]) == 0
    import sqltok

    with duckdb.connect(db) as con:
        sqltok.register(con)
        rows = con.execute(f"SELECT body, ids FROM '{out}'").fetchall()
        assert all(con.execute("SELECT decode('m', ?)", [ids]).fetchall()[0][0] == body for body, ids in rows)
        assert con.execute(f"SELECT list(n_tokens) FROM '{counts}'").fetchall()[0][0] == [len(i) for _, i in rows]
        with duckdb.connect(db) as other:  # a second connection in this process shares the functions
            sqltok.register(other)
            assert other.execute("SELECT token_count('m', 'the fox')").fetchall()[0][0] > 0
