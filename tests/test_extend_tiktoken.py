"""Extending a `.tiktoken` vocabulary: the extension is ranks (see `sqltok/extend/tiktoken_base.py`).

Oracles: tiktoken on the exported `.tiktoken` file (with the report's special tokens) must give the
ids sqltok gives on the stored model, on the corpus and on hypothesis text; HF tokenizers on the
`--format hf` export too; every old rank is where it was.
"""
from __future__ import annotations

import base64

import duckdb
import pytest
import tiktoken
import tiktoken.load
from hypothesis import given, settings, strategies as st
from tokenizers import Tokenizer as HFTokenizer

from sqltok.bpe.tiktoken_file import parse_tiktoken
from sqltok.cli import main
from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.extend.extend import extend_model
from sqltok.model_files import export_model
from sqltok.pretokenizer import patterns
from sqltok.register import register
from sqltok.store import model_names

from conftest import TRAIN_DIR

ADD = 150


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """200 multilingual documents as JSONL, and their texts."""
    path = tmp_path_factory.mktemp("extend_tiktoken") / "multi.jsonl"
    duckdb.sql(f"COPY (SELECT text FROM read_json_auto('{TRAIN_DIR / 'multi_train.jsonl.zst'}') LIMIT 200) "
               f"TO '{path}' (FORMAT json)")
    return Source(path=str(path)), [r[0] for r in duckdb.sql(f"SELECT text FROM read_json_auto('{path}')").fetchall()]


@pytest.fixture(scope="module")
def extended(bundled, sample, tmp_path_factory):
    """o200k_base extended by ADD merges on the sample, in a database, with its exports and oracles."""
    folder = tmp_path_factory.mktemp("o200k_ext")
    con = duckdb.connect()
    report = extend_model(con, str(bundled("o200k_base.tiktoken")), sample[0], ADD, "o200k_multi")
    export_model(con, "o200k_multi", folder / "ext.tiktoken", format="tiktoken")
    export_model(con, "o200k_multi", folder / "tokenizer.json", format="hf")
    specials = {s: now for s, (_, now) in report.special_tokens.items()}
    ref = tiktoken.Encoding("o200k_multi", pat_str=patterns.O200K, special_tokens=specials,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(folder / "ext.tiktoken")))
    yield con, report, folder, ref
    con.close()


def _sqltok(con, texts: list[str]) -> list[list[int]]:
    return [r[0] for r in con.execute("SELECT encode('o200k_multi', t) FROM (SELECT unnest(?::VARCHAR[]) AS t)",
                                      [texts]).fetchall()]


def test_old_ranks_stay_and_new_tokens_follow_them(bundled, extended):
    con, report, folder, _ = extended
    old = parse_tiktoken(bundled("o200k_base.tiktoken").read_bytes())
    new = parse_tiktoken((folder / "ext.tiktoken").read_bytes())
    assert {t: new[t] for t in old} == old
    assert report.new_tokens == ADD and report.merges >= ADD
    assert sorted(r for t, r in new.items() if t not in old) == list(range(199998, 199998 + ADD))
    assert report.special_tokens == {"<|endoftext|>": (199999, 199998 + ADD), "<|endofprompt|>": (200018, 199999 + ADD)}
    assert report.n_vocab == 200000 + ADD
    assert report.regression.old_ids_changed == 0
    assert report.regression.bytes_per_token_after > report.regression.bytes_per_token_before


def test_tiktoken_and_hf_encode_the_exports_as_sqltok_encodes_the_model(extended, sample):
    con, report, folder, ref = extended
    texts = sample[1]
    got = _sqltok(con, texts)
    assert got == ref.encode_ordinary_batch(texts)
    hf = HFTokenizer.from_file(str(folder / "tokenizer.json"))
    assert got == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert report.regression.texts_changed > 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab éд中1!\n") | st.characters(codec="utf-8"), max_size=40), min_size=1,
                max_size=8), st.data())
def test_tiktoken_on_the_export_is_sqltok_on_the_stored_model(extended, sample, texts, data):
    con, _, _, ref = extended
    # pieces of the corpus too, where the new tokens are
    doc = data.draw(st.sampled_from(sample[1]))
    start = data.draw(st.integers(0, max(0, len(doc) - 1)))
    texts = texts + [doc[start:start + data.draw(st.integers(0, 200))]]
    assert _sqltok(con, texts) == ref.encode_ordinary_batch(texts)


def test_the_command_extends_and_exports_with_special_ids_kept(bundled, sample, tmp_path, capsys):
    db, out = str(tmp_path / "t.duckdb"), tmp_path / "o.tiktoken"
    assert main(["extend", str(bundled("o200k_base.tiktoken")), "--on", sample[0].path, "--add", "5",
                 "--model", "o200k_legal", "--specials", "keep", "--db", db]) == 0
    assert "special token '<|endofprompt|>': id 200018\n" in capsys.readouterr().out
    assert main(["export", "o200k_legal", "--format", "tiktoken", "-o", str(out), "--db", db]) == 0
    ranks = parse_tiktoken(out.read_bytes())
    assert sorted(ranks.values())[199997:] == [199997, 200019, 200020, 200021, 200022, 200023]
    with duckdb.connect(db) as con:
        register(con)
        assert con.execute("SELECT decode('o200k_legal', [199999, 200018])").fetchone()[0] == \
            "<|endoftext|><|endofprompt|>"


def test_what_cannot_be_extended_is_named(bundled, sample, con, tmp_path):
    with pytest.raises(SqltokError, match="GPT-4o .o200k. pattern only"):
        extend_model(con, str(bundled("cl100k_base.tiktoken")), sample[0], 5, "x")
    odd = tmp_path / "odd.tiktoken"
    odd.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    with pytest.raises(SqltokError, match="pre-tokenization pattern is not known"):
        extend_model(con, str(odd), sample[0], 5, "x")
    assert model_names(con) == []
