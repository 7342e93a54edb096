"""The command line under misuse: output formats and files, read-only databases, interrupts, pipes,
special tokens, and notes where a run did less than asked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import sqltok
from conftest import sqltok_home, tiktoken_pair
from sqltok.cli import main


@pytest.fixture()
def trained(tmp_path):
    corpus = tmp_path / "docs.jsonl"
    docs = ["The quick brown fox jumps over the lazy dog.", "It's 2026; the fox isn't lazy!", "Ünïcödé wörds"]
    corpus.write_text("".join(json.dumps({"body": d, "n": i}) + "\n" for i, d in enumerate(docs * 20)),
                      encoding="utf-8")
    db = tmp_path / "w.duckdb"
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "m",
                 "--db", str(db), "--no-progress"]) == 0
    return corpus, db


def _tokens(db: Path, texts: list[str]) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        sqltok.register(con)
        return sum(con.execute("SELECT token_count('m', ?)", [t]).fetchall()[0][0] for t in texts)


@pytest.mark.parametrize("name", ["ids.parquet", "ids.jsonl", "ids.jsonl.gz", "ids.ndjson.zst"])
def test_encode_outputs_and_counts(trained, tmp_path, capsys, name):
    corpus, db = trained
    out = tmp_path / name
    assert main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body", "--output", str(out),
                 "--db", str(db)]) == 0
    texts = [json.loads(line)["body"] for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert f"60 rows, {_tokens(db, texts):,} tokens" in capsys.readouterr().out
    with duckdb.connect() as con:
        reader = "read_parquet" if name.endswith(".parquet") else "read_json_auto"
        cols = [d[0] for d in con.execute(f"SELECT * FROM {reader}('{out}')").description]
    assert cols == ["ids"]  # only what was asked for
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_an_encode_killed_before_its_rename_leaves_nothing_an_output_glob_reads(trained, tmp_path, monkeypatch):
    """A run killed outright (no cleanup) between writing and renaming leaves its partial file: it must
    not match the glob users read the outputs with (DuckDB's globs match hidden files)."""
    corpus, db = trained
    out = tmp_path / "ids" / "part-0.parquet"
    out.parent.mkdir()

    def killed(*args):
        raise SystemExit(9)

    monkeypatch.setattr(os, "replace", killed)
    monkeypatch.setattr(Path, "unlink", lambda *a, **k: None)  # as if killed: the except clause cleans nothing
    with pytest.raises(SystemExit):
        main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body", "--output", str(out),
              "--db", str(db)])
    left = [p.name for p in out.parent.iterdir()]
    assert len(left) == 1 and left[0].startswith(".")  # the partial file is there ...
    with duckdb.connect() as con:  # ... and no reader of the outputs sees it
        assert con.execute(f"SELECT count(*) FROM glob('{out.parent}/*.parquet')").fetchone()[0] == 0


def test_encode_keep_columns_and_counts(trained, tmp_path, capsys):
    corpus, db = trained
    out = tmp_path / "n.parquet"
    assert main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body", "--output", str(out),
                 "--keep-columns", "n", "--count", "--db", str(db)]) == 0
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT n, n_tokens FROM '{out}'").fetchall()
    assert [r[0] for r in rows] == list(range(60)) and all(r[1] > 0 for r in rows)
    total = sum(r[1] for r in rows)
    assert f"{total:,} tokens" in capsys.readouterr().out


@pytest.mark.parametrize("output, message", [
    ("ids.csv", "cannot tell the output format"),
    ("ids.parquet.gz", "cannot tell the output format"),
    ("ids.txt", "cannot tell the output format"),
])
def test_encode_refuses_unknown_outputs(trained, tmp_path, capsys, output, message):
    corpus, db = trained
    assert main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body",
                 "--output", str(tmp_path / output), "--db", str(db)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / output).exists()


def test_encode_never_overwrites_its_input(trained, capsys):
    corpus, db = trained
    before = corpus.read_bytes()
    assert main(["encode", "--model", "m", "--input", str(corpus), "--text-key", "body", "--output", str(corpus),
                 "--db", str(db)]) == 2
    assert "is the input" in capsys.readouterr().err and corpus.read_bytes() == before


def test_failed_encode_leaves_no_file(trained, tmp_path, capsys):
    corpus, db = trained
    out = tmp_path / "ids.parquet"
    assert main(["encode", "--model", "ghost", "--input", str(corpus), "--text-key", "body", "--output", str(out),
                 "--db", str(db)]) == 2
    assert "no tokenizer named 'ghost'" in capsys.readouterr().err
    assert list(tmp_path.glob("*ids*")) == []


def test_encode_whole_file_text(tmp_path, bundled, capsys):
    doc = tmp_path / "book.txt"
    doc.write_text("one book\nin two lines\n", encoding="utf-8")
    out = tmp_path / "ids.parquet"
    assert main(["encode", "--model", str(bundled("r50k_base.tiktoken")), "--input", str(doc), "--whole-file",
                 "--output", str(out), "--db", str(tmp_path / "none.duckdb")]) == 0
    assert "1 rows" in capsys.readouterr().out and not (tmp_path / "none.duckdb").exists()


def test_reading_commands_need_an_existing_database_and_open_it_read_only(trained, tmp_path, capsys):
    _, db = trained
    missing = tmp_path / "typo.duckdb"
    assert main(["models", "--db", str(missing)]) == 2
    assert "no such database" in capsys.readouterr().err and not missing.exists()
    other = duckdb.connect(str(db), read_only=True)  # another reader at the same time
    try:
        assert main(["models", "--db", str(db)]) == 0
        assert capsys.readouterr().out.startswith("m\t")
    finally:
        other.close()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    assert main(["models", "--db", str(empty)]) == 0 and capsys.readouterr().out == ""


def test_register_on_a_read_only_connection(trained):
    _, db = trained
    with duckdb.connect(str(db), read_only=True) as con:
        sqltok.register(con)
        assert con.execute("SELECT token_count('m', 'the lazy fox')").fetchall()[0][0] > 0
        assert con.execute("SELECT count(*) FROM sqltok_merges('m')").fetchall()[0][0] == 300 - 243


@pytest.mark.parametrize("failure", [
    KeyboardInterrupt(), duckdb.InterruptException("INTERRUPT Error: Interrupted!"),
    duckdb.InvalidInputException("Python exception occurred while executing the UDF: KeyboardInterrupt"),
    RuntimeError("Query interrupted"),
])
def test_ctrl_c_ends_one_way(trained, tmp_path, monkeypatch, capsys, failure):
    corpus, db = trained

    def interrupted(*args, **kwargs):
        raise failure

    monkeypatch.setattr(sqltok.cli, "train_bpe", interrupted)
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "m2",
                 "--db", str(db), "--no-progress"]) == 130
    assert capsys.readouterr().err == "sqltok: interrupted; the database is as it was\n"
    assert sqltok.model_names(duckdb.connect(str(db), read_only=True)) == ["m"]


@pytest.mark.parametrize("failure", [KeyboardInterrupt(), RuntimeError("Query interrupted")])
def test_ctrl_c_after_the_model_is_stored_says_so(trained, monkeypatch, capsys, failure):
    """Ctrl-C while the held-back documents are encoded: the model is stored, and the message must
    not say the database is as it was (it said so, and with --replace the old model was gone)."""
    corpus, db = trained

    def interrupted(*args, **kwargs):
        raise failure

    monkeypatch.setattr(sqltok.cli, "compression", interrupted)
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "m3",
                 "--holdout", "0.5", "--db", str(db), "--no-progress"]) == 130
    assert capsys.readouterr().err == "sqltok: interrupted after model 'm3' was stored; it is in the database\n"
    assert "m3" in sqltok.model_names(duckdb.connect(str(db), read_only=True))


def test_reference_export_of_a_special_token_with_a_line_break_is_an_error_not_a_traceback(trained, tmp_path,
                                                                                           capsys):
    corpus, db = trained
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "lb",
                 "--special-tokens", "a\nb", "--db", str(db), "--no-progress"]) == 0
    assert main(["export", "lb", "--db", str(db), "-o", str(tmp_path / "lb.model")]) == 2
    assert "line break, which a reference .model file cannot hold" in capsys.readouterr().err
    assert main(["export", "lb", "--db", str(db), "--format", "hf", "--lossy", "-o", str(tmp_path / "lb.json")]) == 0


def test_drop_on_a_missing_database_creates_none(tmp_path, capsys):
    db = tmp_path / "typo.duckdb"
    assert main(["drop", "m", "--db", str(db)]) == 2
    assert f"no such database: {db}" in capsys.readouterr().err and not db.exists()


def test_a_closed_pipe_is_not_an_error(trained, tmp_path):
    _, db = trained
    code = ("import sys, sqltok.cli as c\n"
            "c._cmd_models = lambda args: [print('line', i) for i in range(200000)]\n"
            "sys.exit(c.main(['models', '--db', sys.argv[1]]))\n")
    out = subprocess.run(f'set -o pipefail; "{sys.executable}" -c "$CODE" "{db}" | head -1', shell=True,
                         executable="/bin/bash", capture_output=True, text=True, cwd=sqltok_home(),
                         env={"CODE": code, "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and out.stdout == "line 0\n" and "Broken pipe" not in out.stderr


def test_duplicate_special_tokens_are_refused(trained, capsys):
    corpus, db = trained
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "300", "--model", "dup",
                 "--special-tokens", "<|a|>,<|a|>", "--db", str(db), "--no-progress"]) == 2
    assert "'<|a|>' is given twice" in capsys.readouterr().err


def test_unreachable_vocab_size_is_reported(trained, capsys):
    corpus, db = trained
    assert main(["train", str(corpus), "--text-key", "body", "--vocab-size", "100000", "--model", "big",
                 "--db", str(db), "--no-progress"]) == 0
    assert "note: the corpus gives only" in capsys.readouterr().out


def test_lossy_export_warning_is_a_clean_line(trained, tmp_path, capsys):
    _, db = trained
    assert main(["export", "m", "--db", str(db), "--format", "hf", "--lossy", "-o", str(tmp_path / "t.json")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("sqltok: warning: lossy HF export") and "UserWarning" not in err


@pytest.mark.parametrize("line, message", [
    ({"text": 5}, "is not a string but a UBIGINT"),
    ({"text": ["a"]}, "is not a string but a ARRAY"),
    ({"body": "the key is another"}, "have no 'text' (is the text key or column right?)"),
])
def test_jsonl_text_must_be_strings(tmp_path, capsys, line, message):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": "fine"}) + "\n" + json.dumps(line) + "\n" if "text" in line else
                    json.dumps(line) + "\n", encoding="utf-8")
    assert main(["train", str(path), "--vocab-size", "260", "--model", "m", "--db", str(tmp_path / "w.duckdb"),
                 "--no-progress"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("source", ["parquet", "table", "sql"])
def test_a_training_source_without_the_text_column_names_its_columns(tmp_path, capsys, source):
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE docs AS SELECT 'the fox' AS body, 1 AS n")
        con.execute(f"COPY docs TO '{tmp_path / 'docs.parquet'}' (FORMAT parquet)")
    where = {"parquet": [str(tmp_path / "docs.parquet")], "table": ["--table", "docs"],
             "sql": ["--sql", "SELECT * FROM docs"]}[source]
    assert main(["train", *where, "--vocab-size", "260", "--model", "m", "--db", str(db), "--no-progress"]) == 2
    assert "has no column 'text' (name the text column with --text-key / text_key=); its columns: body, n" \
        in capsys.readouterr().err
    assert main(["train", *where, "--text-key", "body", "--vocab-size", "260", "--model", "m", "--db", str(db),
                 "--no-progress"]) == 0


@pytest.mark.parametrize("suffix", ["parquet", "jsonl"])
def test_encode_and_evaluate_name_a_missing_column_and_the_columns_there_are(trained, tmp_path, capsys, suffix):
    _, db = trained
    path = tmp_path / f"docs.{suffix}"
    duckdb.sql(f"COPY (SELECT 'the fox' AS body, 1 AS n) TO '{path}' (FORMAT {'parquet' if suffix == 'parquet' else 'json'})")
    out = str(tmp_path / "ids.parquet")
    assert main(["encode", "--model", "m", "--db", str(db), "--input", str(path), "--output", out]) == 2
    assert "has no column 'text' (name the text column with --text-key" in capsys.readouterr().err
    assert main(["encode", "--model", "m", "--db", str(db), "--input", str(path), "--output", out,
                 "--text-key", "body", "--keep-columns", "n,lang"]) == 2
    assert "has no column 'lang' to keep; its columns: body, n" in capsys.readouterr().err
    if suffix == "parquet":  # JSONL reads a missing key as NULL texts (see require_text_column)
        assert main(["evaluate", "m", "--db", str(db), "--on", str(path)]) == 2
        assert "has no column 'text' (name the text column with --text-key" in capsys.readouterr().err
    assert main(["encode", "--model", "m", "--db", str(db), "--input", str(path), "--output", out,
                 "--text-key", "body", "--keep-columns", "n"]) == 0


@pytest.mark.parametrize("sql", ["SELECT 'the fox and the dog' AS text;", "SELECT 'the fox and the dog' AS text -- note",
                                 "SELECT 'the fox and the dog' AS text; -- note\n"])
def test_sql_source_may_end_in_a_semicolon_or_comment(tmp_path, sql):
    assert main(["train", "--sql", sql, "--vocab-size", "250", "--model", "m", "--db", str(tmp_path / "w.duckdb"),
                 "--no-progress"]) == 0


def test_sql_source_must_be_one_select(tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    assert main(["train", "--sql", "SELECT 'a' AS text; DROP TABLE x", "--vocab-size", "250", "--model", "m",
                 "--db", str(db), "--no-progress"]) == 2
    assert "single SELECT" in capsys.readouterr().err


def test_model_names_without_nul(con):
    with pytest.raises(sqltok.SqltokError, match="without NUL bytes"):
        sqltok.train_bpe(con, "SELECT 'a b' AS text", 250, "a\0b")


def test_encode_reads_a_parquet_column_whatever_the_case_of_its_name_as_training_does(tmp_path, capsys):
    path = tmp_path / "docs.parquet"
    duckdb.sql(f"COPY (SELECT 'the quick fox ' || i AS Text, i AS ID FROM range(50) t(i)) TO '{path}' (FORMAT parquet)")
    db = str(tmp_path / "w.duckdb")
    assert main(["train", str(path), "--vocab-size", "270", "--model", "m", "--db", db, "--no-progress"]) == 0
    out = tmp_path / "ids.parquet"
    assert main(["encode", "--model", "m", "--db", db, "--input", str(path), "--output", str(out),
                 "--keep-columns", "id", "--no-progress"]) == 0, capsys.readouterr().err
    with duckdb.connect(db, read_only=True) as con:
        sqltok.register(con)
        expected = con.execute(f"SELECT ID, encode('m', Text) FROM '{path}'").fetchall()
    assert duckdb.sql(f"SELECT * FROM '{out}'").fetchall() == expected


def test_encode_with_a_tokenizer_file_named_like_a_stored_model(trained, tmp_path, capsys):
    """A tokenizer file needs no database: one that holds a model of the file's name (here 'm', as
    ./sqltok.duckdb might) does not stop `encode --model m.model`."""
    corpus, db = trained
    model_file = tmp_path / "m.model"
    assert main(["export", "m", "-o", str(model_file), "--db", str(db)]) == 0
    out = tmp_path / "ids.parquet"
    assert main(["encode", "--model", str(model_file), "--input", str(corpus), "--text-key", "body",
                 "--output", str(out), "--db", str(db), "--no-progress"]) == 0, capsys.readouterr().err
    with duckdb.connect(str(db), read_only=True) as con:
        sqltok.register(con)
        expected = con.execute(f"SELECT encode('m', body) FROM read_json('{corpus}')").fetchall()
    assert duckdb.sql(f"SELECT ids FROM '{out}'").fetchall() == expected


@pytest.mark.parametrize("texts", [["2024-01-02", "1999-12-31"], ["2024-01-02T10:00:00Z", "2023-05-06T07:08:09Z"],
                                   ["10:11:12", "23:59:59"], ["12345", "0042"]])
def test_encode_reads_jsonl_texts_that_look_like_dates_or_numbers_as_text(tmp_path, bundled, capsys, texts):
    """DuckDB's JSON reader types a key whose strings all look like dates as DATE (or TIMESTAMP, TIME):
    encode reads the text key as VARCHAR, the other keys as DuckDB detects them (`day` stays a DATE),
    and gives tiktoken's ids."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": t, "day": "2024-01-02"}) + "\n" for t in texts), encoding="utf-8")
    out = tmp_path / "ids.parquet"
    ref = tiktoken_pair(bundled("r50k_base.tiktoken"))[1]
    assert main(["encode", "--model", str(bundled("r50k_base.tiktoken")), "--input", str(docs), "--output", str(out),
                 "--keep-columns", "*", "--db", str(tmp_path / "none.duckdb")]) == 0
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT text, ids FROM '{out}'").fetchall()
        days = con.execute(f"SELECT DISTINCT typeof(day), day::VARCHAR FROM '{out}'").fetchall()
    assert rows == [(t, ref.encode(t)) for t in texts]
    assert days == [("DATE", "2024-01-02")]


def test_encode_reads_binary_text_as_training_does(trained, tmp_path, capsys):
    """A Parquet text column of binary type encodes as the same text as a string column (training
    already decoded it); one that is not UTF-8 names its document, and no output is left."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    _, db = trained
    texts = ["The quick brown fox.", None, "", "Ünïcödé wörds"]
    as_string, as_binary = tmp_path / "s.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table({"body": pa.array(texts)}), as_string)
    pq.write_table(pa.table({"body": pa.array([t and t.encode() for t in texts], pa.binary())}), as_binary)
    outs = {}
    for src in (as_string, as_binary):
        out = tmp_path / f"{src.stem}.ids.parquet"
        assert main(["encode", "--model", "m", "--input", str(src), "--text-key", "body", "--output", str(out),
                     "--db", str(db)]) == 0
        outs[src] = pq.read_table(out).column("ids").to_pylist()
    assert outs[as_binary] == outs[as_string] and outs[as_string][0]
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"body": pa.array([b"fine", b"\xff\xfe"], pa.binary())}), bad)
    capsys.readouterr()
    assert main(["encode", "--model", "m", "--input", str(bad), "--text-key", "body", "--output",
                 str(tmp_path / "bad.ids.parquet"), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "document 2 of" in err and "not valid UTF-8" in err
    assert not (tmp_path / "bad.ids.parquet").exists()


@pytest.mark.parametrize("name", ["empty.jsonl", "blank.jsonl.gz"])
def test_encode_of_a_jsonl_without_lines_writes_an_output_of_no_rows(trained, tmp_path, capsys, name):
    """A JSONL file of white space only (DuckDB reads no column of it) encodes to an output of no rows,
    as its shard does on a cluster, not to "no column 'text'"."""
    import gzip
    _, db = trained
    src = tmp_path / name
    src.write_bytes(gzip.compress(b"\n \n") if name.endswith(".gz") else b"")
    out = tmp_path / "ids.parquet"
    assert main(["encode", "--model", "m", "--input", str(src), "--output", str(out), "--db", str(db)]) == 0
    assert "0 rows, 0 tokens" in capsys.readouterr().out
    with duckdb.connect() as con:
        assert con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchall() == [(0,)]
        assert [d[0] for d in con.execute(f"SELECT * FROM read_parquet('{out}')").description] == ["ids"]
