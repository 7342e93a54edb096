"""`sqltok train`'s output: a model's first ten merges as the store lists them (regular merges, then
supermerges), however few regular merges the model has; with --no-progress, no progress bar at all."""
import json

import duckdb
import pytest

from sqltok.cli import _parser, _train, main
from sqltok.register import register


@pytest.mark.parametrize("method, vocab, docs", [
    ("bpe", 300, ["the cat sat on the mat", "the cat and the hat", "a hat on a cat"]),
    ("boundless", 256, ["xy xy xy xy xy xy"]),  # 2 regular merges, 4 supermerges
])
def test_first_merges_are_the_store_s_first_ten(tmp_path, capsys, method, vocab, docs):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs * 30), encoding="utf-8")
    db = str(tmp_path / "w.duckdb")
    assert main(["train", str(path), "--method", method, "--vocab-size", str(vocab), "--model", "m",
                 "--db", db, "--no-progress"]) == 0
    printed = capsys.readouterr().out.split("first merges:\n")[1].splitlines()
    with duckdb.connect(db) as con:
        register(con)
        rows = con.execute("SELECT idx, count, is_super FROM sqltok_merges('m') LIMIT 10").fetchall()
    assert len(rows) == (10 if method == "bpe" else 6)
    if method == "boundless":
        assert 0 < sum(r[2] for r in rows) < len(rows)  # regular merges and supermerges among them
    assert [(int(line.split()[0]), int(line.split()[-1].replace(",", ""))) for line in printed] == \
        [(idx, count) for idx, count, _ in rows]


def test_no_progress_turns_off_duckdb_s_own_bar(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": "the cat sat on the mat"}) + "\n", encoding="utf-8")
    args = _parser().parse_args(["train", str(path), "--vocab-size", "250", "--model", "m", "--no-progress"])
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        con.execute("SET enable_progress_bar = true")  # DuckDB's default in a plain `python` process
        _train(con, args)
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchall() == [(False,)]
