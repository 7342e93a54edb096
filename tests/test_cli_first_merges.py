"""`sqltok train` prints a model's first ten merges as the store lists them (regular merges, then
supermerges), however few regular merges the model has."""
import json

import duckdb
import pytest

from sqltok.cli import main
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
