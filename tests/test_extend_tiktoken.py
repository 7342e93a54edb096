"""Extending a `.tiktoken` vocabulary: the extension is ranks (see `sqltok/extend/tiktoken_base.py`).

Oracles: tiktoken on the exported `.tiktoken` file (with the report's special tokens) must give the
ids sqltok gives on the stored model, on the corpus and on hypothesis text; HF tokenizers on the
`--format hf` export too; every old rank is where it was. Bases with other patterns (cl100k, GPT-2's
r50k) count the new corpus's pretokens with their own pattern: Python `regex` on the pattern is the
oracle of the counts.
"""
from __future__ import annotations

import base64
import json
from collections import Counter

import duckdb
import pytest
import regex
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

from conftest import SHARED_TOKENIZERS, TRAIN_DIR

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


def test_special_ids_kept_below_the_new_tokens_stay_in_the_hf_export(bundled, sample, con, tmp_path):
    # HF numbers an added token missing from the vocabulary after the vocabulary's size: o200k's
    # specials, kept at 199999 and 200018 with the new tokens after them, must be in the vocabulary
    extend_model(con, str(bundled("o200k_base.tiktoken")), sample[0], 5, "kept", specials="keep")
    export_model(con, "kept", tmp_path / "tokenizer.json", format="hf")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = "<|endoftext|>" + sample[1][0][:300] + "<|endofprompt|>"
    got = con.execute("SELECT encode_special('kept', ?)", [text]).fetchone()[0]
    assert got[0] == 199999 and got[-1] == 200018
    assert hf.encode(text, add_special_tokens=False).ids == got


OTHER_PATTERNS = {"cl100k_base.tiktoken": patterns.CL100K, "r50k_base.tiktoken": patterns.R50K}


@pytest.fixture(scope="module", params=sorted(OTHER_PATTERNS))
def other(request, bundled, sample, tmp_path_factory):
    """A base of another pattern extended by 60 merges on the sample, with tiktoken on its export."""
    folder = tmp_path_factory.mktemp("other_ext")
    con = duckdb.connect()
    report = extend_model(con, str(bundled(request.param)), sample[0], 60, "ext")
    export_model(con, "ext", folder / "ext.tiktoken", format="tiktoken")
    specials = {s: now for s, (_, now) in report.special_tokens.items()}
    ref = tiktoken.Encoding("ext", pat_str=OTHER_PATTERNS[request.param], special_tokens=specials,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(folder / "ext.tiktoken")))
    old = parse_tiktoken(bundled(request.param).read_bytes())
    yield con, report, ref, old, OTHER_PATTERNS[request.param]
    con.close()


def test_other_patterns_count_with_their_own_pretokens(other, sample):
    con, report, _, _, pattern = other
    counts = dict(con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('ext')").fetchall())
    assert counts == Counter(p for text in sample[1] for p in regex.findall(pattern, text))
    assert report.regression.old_ids_changed == 0 and report.new_tokens == 60


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab éд中1!\n'") | st.characters(codec="utf-8"), max_size=40), min_size=1,
                max_size=6))
def test_other_patterns_extend_into_ranks_tiktoken_reads_alike(other, sample, texts):
    con, _, ref, old, _ = other
    new = ref._mergeable_ranks
    assert all(new[t] == r for t, r in old.items())
    texts = texts + sample[1][:20]
    got = [r[0] for r in con.execute("SELECT encode('ext', t) FROM (SELECT unnest(?::VARCHAR[]) AS t)",
                                     [texts]).fetchall()]
    assert got == ref.encode_ordinary_batch(texts)


WHISPER = SHARED_TOKENIZERS / "whisper-multilingual" / "multilingual.tiktoken"


@pytest.mark.skipif(not WHISPER.exists(), reason="../shared/fixtures/tokenizers not present")
def test_whisper_keeps_its_empty_token_and_new_tokens_take_free_ids(sample, con, tmp_path):
    # multilingual.tiktoken's last rank, 50256, is the empty token ("="): it keeps its rank, and the
    # new tokens start after it, not on it
    report = extend_model(con, str(WHISPER), sample[0], 20, "whisper_ext", specials="move")
    export_model(con, "whisper_ext", tmp_path / "ext.tiktoken", format="tiktoken")
    old, new = parse_tiktoken(WHISPER.read_bytes()), parse_tiktoken((tmp_path / "ext.tiktoken").read_bytes())
    assert old[b""] == 50256 and {t: new[t] for t in old} == old
    assert sorted(r for t, r in new.items() if t not in old) == list(range(50257, 50257 + 20))
    assert list(report.special_tokens.values())[:2] == [(50257, 50277), (50258, 50278)]
    assert report.n_vocab == 51865 + 20 and report.regression.old_ids_changed == 0
    specials = {s: now for s, (_, now) in report.special_tokens.items()}
    ref = tiktoken.Encoding("whisper_ext", pat_str=patterns.GPT2, special_tokens=specials,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(tmp_path / "ext.tiktoken")))
    texts = sample[1][:50] + ["<|endoftext|> <|en|>"]
    got = [r[0] for r in con.execute("SELECT encode_special('whisper_ext', t) FROM (SELECT unnest(?::VARCHAR[]) AS t)",
                                     [texts]).fetchall()]
    assert got == [ref.encode(t, allowed_special="all") for t in texts]


CL100K_JSON = SHARED_TOKENIZERS / "cl100k_base" / "tokenizer.json"


@pytest.mark.skipif(not CL100K_JSON.exists(), reason="../shared/fixtures/tokenizers not present")
def test_a_tokenizer_json_of_the_llama3_pattern_extends_into_one_hf_reads_alike(sample, con, tmp_path):
    report = extend_model(con, str(CL100K_JSON), sample[0], 40, "cl_ext")
    export_model(con, "cl_ext", tmp_path / "tokenizer.json", format="hf")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    got = [r[0] for r in con.execute("SELECT encode('cl_ext', t) FROM (SELECT unnest(?::VARCHAR[]) AS t)",
                                     [sample[1]]).fetchall()]
    assert got == [e.ids for e in hf.encode_batch(sample[1], add_special_tokens=False)]
    counts = dict(con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('cl_ext')").fetchall())
    assert counts == Counter(p for text in sample[1] for p in regex.findall(patterns.LLAMA3, text))
    assert report.regression.old_ids_changed == 0 and report.regression.texts_changed > 0


@pytest.mark.skipif(not CL100K_JSON.exists(), reason="../shared/fixtures/tokenizers not present")
@pytest.mark.parametrize("specials", ["keep", "move"])
def test_tokens_hf_added_to_a_tokenizer_json_keep_the_ids_hf_reads(sample, con, tmp_path, specials):
    # cl100k's vocabulary has 100261 entries up to <|endofprompt|> at 100276: tokens HF adds get
    # 100277 and 100278 in the file it saves, and 100261 and 100262 when it reads it back. The
    # extension took the file's ids (with "keep", <think> went from 100261 to 100277).
    hf = HFTokenizer.from_file(str(CL100K_JSON))
    hf.add_tokens(["<think>"])
    hf.add_special_tokens(["<late>"])
    hf.save(str(tmp_path / "base.json"))
    base = HFTokenizer.from_file(str(tmp_path / "base.json"))
    assert (base.token_to_id("<think>"), base.token_to_id("<late>")) == (100261, 100262)
    with pytest.warns(UserWarning, match="in the file but HF gives it"):
        report = extend_model(con, str(tmp_path / "base.json"), sample[0], 10, "ext", specials=specials)
    export_model(con, "ext", tmp_path / "ext.json", format="hf")
    ext = HFTokenizer.from_file(str(tmp_path / "ext.json"))
    old, new = base.get_vocab(with_added_tokens=True), ext.get_vocab(with_added_tokens=True)
    added = {t.content for t in base.get_added_tokens_decoder().values()}
    assert {t: new[t] for t in old if t not in added} == {t: i for t, i in old.items() if t not in added}
    assert {t: (old[t], new[t]) for t in added} == {t: report.special_tokens.get(t, (old[t], new[t])) for t in added}
    if specials == "keep":
        assert all(new[t] == old[t] for t in added)
    texts = ["<think>a<late> <|endofprompt|><|endoftext|>"] + sample[1][:20]
    got = [r[0] for r in con.execute("SELECT encode_special('ext', t) FROM (SELECT unnest(?::VARCHAR[]) AS t)",
                                     [texts]).fetchall()]
    assert got == [e.ids for e in ext.encode_batch(texts, add_special_tokens=False)]


@pytest.mark.skipif(not CL100K_JSON.exists(), reason="../shared/fixtures/tokenizers not present")
def test_what_cannot_be_extended_is_named(bundled, sample, con, tmp_path):
    doc = json.loads(CL100K_JSON.read_text())
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\w+|\s+|[^\w\s]+"
    odd_json = tmp_path / "odd.json"
    odd_json.write_text(json.dumps(doc))
    with pytest.raises(SqltokError, match="patterns of GPT-4o, cl100k, Llama 3, Qwen 2 and GPT-2 only"):
        extend_model(con, str(odd_json), sample[0], 5, "x")
    odd = tmp_path / "odd.tiktoken"
    odd.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    with pytest.raises(SqltokError, match="pre-tokenization pattern is not known"):
        extend_model(con, str(odd), sample[0], 5, "x")
    assert model_names(con) == []
