"""Extending a byte-level BPE model (`sqltok extend`).

The oracle: learning merges on top of a model trained on the same corpus must give what training the
larger vocabulary from bytes gives (same tokens, merges with their counts and flags, token counts,
special token ids), since the base's encoding of a pretoken is where training stood after the base's
merges. HF tokenizers is the oracle for how an extended model encodes (its HF export), and SQL for the
regression report's figures.
"""
from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pytest
import tiktoken
from hypothesis import given, settings, strategies as st
from tokenizers import Tokenizer as HFTokenizer

from sqltok.bpe.reference_file import write_reference
from sqltok.bpe.tiktoken_file import parse_tiktoken
from sqltok.bpe.train import train_bpe
from sqltok.cli import main
from sqltok.corpus.sources import Source
from sqltok.errors import ModelExistsError, SqltokError
from sqltok.extend import extend as extend_module
from sqltok.extend.extend import extend_model
from sqltok.extend.regression import changed_rows
from sqltok.model_files import export_model
from sqltok.pretokenizer import patterns
from sqltok.store import load_model, model_names
from sqltok.wordpiece.train import train_wordpiece

from conftest import SHARED_TOKENIZERS, TRAIN_DIR


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """The first 300 documents of each training file, as plain JSONL (read fast, again and again)."""
    folder = tmp_path_factory.mktemp("extend")
    out = {}
    for name in ("en", "multi"):
        path = folder / f"{name}.jsonl"
        duckdb.sql(f"COPY (SELECT text FROM read_json_auto('{TRAIN_DIR / (name + '_train.jsonl.zst')}') LIMIT 300) "
                   f"TO '{path}' (FORMAT json)")
        out[name] = Source(path=str(path))
    return out


@pytest.fixture()
def EN(corpora):
    return corpora["en"]


@pytest.fixture()
def MULTI(corpora):
    return corpora["multi"]


def _docs(texts: list[str]) -> str:
    return "SELECT unnest(" + repr(texts).replace("\\'", "''") + "::VARCHAR[]) AS text"


@pytest.mark.parametrize("simple", [False, True])
@pytest.mark.parametrize("name", ["en", "multi"])
def test_extending_on_the_same_corpus_is_training_the_larger_vocabulary(con, corpora, name, simple):
    source = corpora[name]
    train_bpe(con, source, 500, "small", simple=simple)
    train_bpe(con, source, 800, "big", simple=simple)
    report = extend_model(con, "small", source, 300, "ext")
    assert (report.merges, report.new_tokens, report.n_vocab) == (300, 300, 801)
    ext, big = load_model(con, "ext"), load_model(con, "big")
    assert ext.tokens == big.tokens
    assert ext.merges == big.merges and ext.new_ids(ext.merges) == big.new_ids(big.merges)
    assert ext.token_counts == big.token_counts
    assert ext.special_tokens == big.special_tokens == {"<|endoftext|>": 800}
    assert report.special_tokens == {"<|endoftext|>": (500, 800)}


TEXTS = st.lists(st.text(st.sampled_from("ab cé\nд中 1!"), min_size=1, max_size=30), min_size=1, max_size=10)


@pytest.fixture(scope="module")
def shared_con():
    with duckdb.connect() as c:
        yield c


@settings(max_examples=12, deadline=None)
@given(TEXTS, st.integers(243, 260), st.integers(1, 25))
def test_any_corpus_extends_as_it_trains(shared_con, texts, size, add):
    con = shared_con
    small = train_bpe(con, _docs(texts), size, "small", replace=True)
    big = train_bpe(con, _docs(texts), size + add, "big", replace=True)
    report = extend_model(con, "small", _docs(texts), add, "ext", replace=True)
    assert report.merges == big.merges - small.merges
    ext, full = load_model(con, "ext"), load_model(con, "big")
    assert (ext.tokens, ext.merges, ext.token_counts, ext.special_tokens) == \
        (full.tokens, full.merges, full.token_counts, full.special_tokens)


def test_a_new_domain_keeps_every_old_id_and_encodes_as_hf(con, tmp_path, EN, MULTI):
    train_bpe(con, EN, 600, "en", simple=True)
    report = extend_model(con, "en", MULTI, 300, "multi")
    base, ext = load_model(con, "en"), load_model(con, "multi")
    assert ext.tokens[:600] == base.tokens and len(ext.tokens) == 600 + report.new_tokens
    assert ext.merges[:len(base.merges)] == base.merges
    assert [m.new_id for m in ext.merges[len(base.merges):]] == list(range(600, 600 + report.new_tokens))
    assert report.regression.old_ids == 600 and report.regression.old_ids_changed == 0
    export_model(con, "multi", tmp_path / "tokenizer.json", format="hf")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = [r[0] for r in con.execute(f"SELECT text FROM ({MULTI.query()}) LIMIT 200").fetchall()]
    got = [r[0] for r in con.execute("SELECT encode('multi', t) FROM (SELECT unnest(?) AS t)", [texts]).fetchall()]
    assert got == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert con.execute("SELECT decode('multi', encode('multi', ?))", [texts[0]]).fetchall()[0][0] == texts[0]


def test_the_regression_report_is_what_sql_measures(con, EN, MULTI):
    train_bpe(con, EN, 600, "en")
    g = extend_model(con, "en", MULTI, 200, "multi").regression
    q = f"SELECT text FROM ({MULTI.query()}) WHERE text <> ''"
    docs, nbytes, before, after, changed = con.execute(
        f"SELECT count(*), sum(octet_length(encode(text))), sum(token_count('en', text)), "
        f"sum(token_count('multi', text)), count(*) FILTER (WHERE encode('en', text) <> encode('multi', text)) "
        f"FROM ({q})").fetchall()[0]
    assert (g.documents, g.bytes, g.tokens_before, g.tokens_after, g.texts_changed) == \
        (docs, nbytes, before, after, changed)
    assert g.bytes_per_token_after > g.bytes_per_token_before


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 3), max_size=5), st.lists(st.integers(0, 3), max_size=5)),
                max_size=12))
def test_changed_rows_counts_the_rows_that_differ(rows):
    a = pa.array([x for x, _ in rows], pa.list_(pa.int32()))
    b = pa.array([y for _, y in rows], pa.large_list(pa.int32()))
    assert changed_rows(a, b) == sum(x != y for x, y in rows)


def test_a_reference_file_extends_as_the_stored_model(con, tmp_path, EN, MULTI):
    train_bpe(con, EN, 500, "en")
    write_reference(load_model(con, "en"), tmp_path / "en.model")
    extend_model(con, "en", MULTI, 100, "from_db")
    extend_model(con, str(tmp_path / "en.model"), MULTI, 100, "from_file")
    a, b = load_model(con, "from_db"), load_model(con, "from_file")
    assert (a.tokens, a.merges, a.special_tokens) == (b.tokens, b.merges, b.special_tokens)


def test_special_tokens_keep_their_ids_when_no_new_token_needs_them(con, EN, MULTI):
    train_bpe(con, EN, 400, "plain", special_tokens=())
    report = extend_model(con, "plain", MULTI, 50, "kept", specials="keep")
    assert report.special_tokens == {} and report.n_vocab == 450
    train_bpe(con, EN, 400, "eot")
    with pytest.raises(SqltokError, match="specials='move'"):
        extend_model(con, "eot", MULTI, 50, "bad", specials="keep")
    assert "bad" not in model_names(con)


def test_bad_input_is_named(con, tmp_path, EN, MULTI):
    train_bpe(con, EN, 300, "en")
    with pytest.raises(SqltokError, match="positive number"):
        extend_model(con, "en", MULTI, 0, "x")
    with pytest.raises(SqltokError, match="no model named 'nope'"):
        extend_model(con, "nope", MULTI, 10, "x")
    with pytest.raises(SqltokError, match="specials must be one of"):
        extend_model(con, "en", MULTI, 10, "x", specials="front")
    with pytest.raises(ModelExistsError):
        extend_model(con, "en", MULTI, 10, "en")
    train_wordpiece(con, MULTI, 200, "wp")
    with pytest.raises(SqltokError, match="is a wordpiece model"):
        extend_model(con, "wp", MULTI, 10, "x")
    ranks = tmp_path / "r.tiktoken"
    ranks.write_text("YQ== 0\nYg== 1\n")
    with pytest.raises(SqltokError, match="its pre-tokenization pattern is not known"):
        extend_model(con, str(ranks), MULTI, 10, "x")
    assert sorted(model_names(con)) == ["en", "wp"]


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_a_failed_run_leaves_the_database_as_it_was(con, monkeypatch, failure, EN, MULTI):
    train_bpe(con, EN, 300, "en")
    extend_model(con, "en", MULTI, 20, "ext")
    before = load_model(con, "ext")

    def fail(*args, **kwargs):
        raise failure("stop")

    monkeypatch.setattr(extend_module, "save_pretoken_counts", fail)
    with pytest.raises(failure):
        extend_model(con, "en", MULTI, 40, "ext", replace=True)
    assert load_model(con, "ext") == before
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '__sqltok_%'").fetchall() == [(0,)]


def test_the_command_prints_the_report(tmp_path, capsys, EN, MULTI):
    db = str(tmp_path / "m.duckdb")
    corpus = MULTI.path
    assert main(["train", EN.path, "--vocab-size", "300",
                 "--model", "en", "--db", db]) == 0
    assert main(["extend", "en", "--on", corpus, "--add", "50", "--model", "multi",
                 "--db", db]) == 0
    out = capsys.readouterr().out
    assert "with 50 more merges" in out and "'<|endoftext|>': id 300 -> 350" in out
    assert "300 of 300 decode as before" in out and "texts encode differently" in out
    assert main(["extend", "en", "--on", corpus, "--add", "5", "--model", "multi", "--db", db]) == 2
    assert "exists already" in capsys.readouterr().err


@pytest.mark.parametrize("specials", ["move", "keep"])
def test_a_tokenizer_json_extends_into_one_hf_reads_alike(con, tmp_path, EN, MULTI, specials):
    train_bpe(con, EN, 400, "en", simple=True)
    export_model(con, "en", tmp_path / "base.json", format="hf")
    report = extend_model(con, str(tmp_path / "base.json"), MULTI, 120, "ext", specials=specials)
    export_model(con, "ext", tmp_path / "ext.json", format="hf")
    base, hf = HFTokenizer.from_file(str(tmp_path / "base.json")), HFTokenizer.from_file(str(tmp_path / "ext.json"))
    vocab, old = hf.get_vocab(), base.get_vocab()
    assert all(vocab[t] == i for t, i in old.items() if t != "<|endoftext|>")
    first = 400 if specials == "move" else 401
    assert sorted(i for t, i in vocab.items() if t not in old) == list(range(first, first + report.new_tokens))
    assert vocab["<|endoftext|>"] == report.special_tokens["<|endoftext|>"][1] == \
        (400 + report.new_tokens if specials == "move" else 400)
    texts = [r[0] for r in con.execute(f"SELECT text FROM ({MULTI.query()}) LIMIT 150").fetchall()]
    got = [r[0] for r in con.execute("SELECT encode('ext', t) FROM (SELECT unnest(?) AS t)", [texts]).fetchall()]
    assert got == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert got != [e.ids for e in base.encode_batch(texts, add_special_tokens=False)]
    assert report.regression.old_ids_changed == 0 and report.regression.old_ids == 400


def test_an_extended_file_extends_again_by_its_name(con, bundled, tmp_path, EN, MULTI):
    # a tokenizer.json: as its export extends
    train_bpe(con, EN, 400, "en", simple=True)
    export_model(con, "en", tmp_path / "base.json", format="hf")
    extend_model(con, str(tmp_path / "base.json"), EN, 30, "once")
    twice = extend_model(con, "once", MULTI, 30, "twice")
    assert twice.regression.old_ids_changed == 0 and twice.new_tokens == 30
    export_model(con, "once", tmp_path / "once.json", format="hf")
    extend_model(con, str(tmp_path / "once.json"), MULTI, 30, "from_file")
    export_model(con, "twice", tmp_path / "a.json", format="hf")
    export_model(con, "from_file", tmp_path / "b.json", format="hf")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    # a .tiktoken: every rank kept, tiktoken reads the export alike
    extend_model(con, str(bundled("r50k_base.tiktoken")), EN, 30, "t_once")
    t_twice = extend_model(con, "t_once", MULTI, 30, "t_twice")
    assert t_twice.regression.old_ids_changed == 0 and t_twice.special_tokens == {"<|endoftext|>": (50286, 50316)}
    export_model(con, "t_once", tmp_path / "once.tiktoken", format="tiktoken")
    export_model(con, "t_twice", tmp_path / "twice.tiktoken", format="tiktoken")
    once, ranks = (parse_tiktoken((tmp_path / f).read_bytes()) for f in ("once.tiktoken", "twice.tiktoken"))
    assert {t: ranks[t] for t in once} == once and sorted(ranks.values()) == list(range(50316))
    ref = tiktoken.Encoding("t", pat_str=patterns.R50K, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50316})
    texts = [r[0] for r in con.execute(f"SELECT text FROM ({MULTI.query()}) LIMIT 50").fetchall()]
    got = [r[0] for r in con.execute("SELECT encode('t_twice', t) FROM (SELECT unnest(?) AS t)", [texts]).fetchall()]
    assert got == ref.encode_ordinary_batch(texts)

def test_an_added_token_inside_the_vocabulary_cuts_the_pretokens_it_is_in(con, tmp_path, EN, MULTI):
    # HF splits a non-special added token out of the text first and merges the pieces apart: the base
    # encodes "er" in "her", "very", ... as the added token, which the merges must go around
    train_bpe(con, EN, 500, "en", simple=True)
    export_model(con, "en", tmp_path / "base.json", format="hf")
    doc = json.loads((tmp_path / "base.json").read_text())
    er = doc["model"]["vocab"]["er"]
    doc["added_tokens"].insert(0, {"id": er, "content": "er", "single_word": False, "lstrip": False,
                                   "rstrip": False, "normalized": False, "special": False})
    (tmp_path / "base.json").write_text(json.dumps(doc))
    report = extend_model(con, str(tmp_path / "base.json"), EN, 100, "ext")
    assert report.new_tokens == 100 and report.regression.old_ids_changed == 0
    export_model(con, "ext", tmp_path / "ext.json", format="hf")
    hf = HFTokenizer.from_file(str(tmp_path / "ext.json"))
    assert hf.get_vocab()["er"] == er
    texts = [r[0] for r in con.execute(f"SELECT text FROM ({EN.query()}) LIMIT 150").fetchall()]
    got = [r[0] for r in con.execute("SELECT encode('ext', t) FROM (SELECT unnest(?) AS t)", [texts]).fetchall()]
    assert got == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert sum(ids.count(er) for ids in got) > 100


O200K_JSON = SHARED_TOKENIZERS / "o200k_base" / "tokenizer.json"


@pytest.mark.skipif(not O200K_JSON.exists(), reason="../shared/fixtures/tokenizers not present")
def test_o200k_extends_with_its_ids_and_special_tokens_moved(con, tmp_path, MULTI):
    report = extend_model(con, str(O200K_JSON), MULTI, 100, "o200k_multi")
    assert report.special_tokens == {"<|endoftext|>": (199999, 199998 + report.new_tokens),
                                     "<|endofprompt|>": (200018, 199999 + report.new_tokens)}
    assert report.regression.old_ids_changed == 0
    assert report.regression.bytes_per_token_after > report.regression.bytes_per_token_before
    export_model(con, "o200k_multi", tmp_path / "tokenizer.json", format="hf")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = [r[0] for r in con.execute(f"SELECT text FROM ({MULTI.query()}) LIMIT 100").fetchall()]
    got = [r[0] for r in con.execute("SELECT encode('o200k_multi', t) FROM (SELECT unnest(?) AS t)",
                                     [texts]).fetchall()]
    assert got == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
