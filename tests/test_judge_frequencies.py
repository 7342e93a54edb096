"""Token frequencies, unused (under-trained candidate) tokens, fragmentation of terms, merge curves and
type-token ratios by group, each against a direct computation over the tokenizers' Python API."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import oracle_pretokenize as oracle
import sqltok
from sqltok.bpe.candidates import candidates_arrow
from sqltok.errors import ModelNotFoundError
from sqltok.judge.curves import group_type_token_ratios, merge_curve
from sqltok.judge.frequencies import fragmentation, token_frequencies, unused_tokens
from sqltok.named_tokenizers import named_tokenizers

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
EN_VALID = Path(__file__).parent / "data" / "golden" / "en_valid.jsonl.gz"


@pytest.fixture(scope="module")
def store(bundled):
    """o200k loaded from its file, a BPE model and a BoundlessBPE model trained into the store."""
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('o200k', ?)", [str(bundled("o200k_base.tiktoken"))]).fetchall()
    sqltok.train_bpe(con, sqltok.Source(path=str(EN_VALID)), 600, "small")
    sqltok.train_superword(con, sqltok.Source(path=str(EN_VALID)), 700, "bl", simple=True)
    con.execute(f"CREATE TABLE valid AS SELECT text, lang FROM read_json('{SAMPLE}')")
    yield con
    con.close()


def _texts(con) -> list[str]:
    return [t for (t,) in con.execute("SELECT text FROM valid").fetchall()]


def test_token_frequencies(store):
    tok = named_tokenizers(store).get("o200k")
    counts = Counter(i for t in _texts(store) for i in tok.encode_ordinary(t))
    rows = token_frequencies(store, "o200k", sqltok.Source(table="valid")).to_pylist()
    total = sum(counts.values())
    assert {r["id"]: r["n"] for r in rows} == counts
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert [(-r["n"], r["id"]) for r in rows] == sorted((-r["n"], r["id"]) for r in rows)
    for r in rows:
        assert r["token"] == tok.decode_single_token_bytes(r["id"])
        assert r["text"] == r["token"].decode("utf-8", "replace")
        assert r["share"] == pytest.approx(counts[r["id"]] / total, rel=1e-12)


def test_unused_tokens_of_a_stored_model(store):
    tok = named_tokenizers(store).get("small")
    texts = _texts(store)
    counts = Counter(i for t in texts for i in tok.encode_ordinary(t))
    trained = dict(store.execute("SELECT id, count FROM sqltok_tokens('small')").fetchall())
    specials = set(tok.special_tokens.values())
    total, trained_total = sum(counts.values()), sum(trained.values())
    want = set()
    for i in range(tok.n_vocab):
        if i in specials:
            continue
        expected = trained[i] / trained_total * total
        if counts[i] == 0 or counts[i] * 4 < expected:
            want.add(i)
    rows = unused_tokens(store, "small", sqltok.Source(table="valid"), factor=4).to_pylist()
    assert {r["id"] for r in rows} == want
    assert any(r["n"] > 0 for r in rows) and any(r["n"] == 0 for r in rows)
    merged = dict(store.execute("SELECT new_id, count FROM sqltok_merges('small')").fetchall())
    for r in rows:
        assert r["trained_count"] == trained[r["id"]] and r["merge_count"] == merged.get(r["id"])
        assert r["expected"] == pytest.approx(trained[r["id"]] / trained_total * total, rel=1e-12)


def test_unused_tokens_of_a_tokenizer_file(store):
    """Without training counts every token the corpus never uses is a candidate, special ones left out."""
    tok = named_tokenizers(store).get("o200k")
    used = {i for t in _texts(store) for i in tok.encode_ordinary(t)}
    rows = unused_tokens(store, "o200k", sqltok.Source(table="valid")).to_pylist()
    vocab = {i for i in range(tok.n_vocab) if i not in tok.special_tokens.values()} - set(range(199998, 200018))
    assert {r["id"] for r in rows} == vocab - used
    assert all(r["expected"] is None and r["n"] == 0 for r in rows)


def test_fragmentation(store):
    terms = ["habeas corpus", "Rechtsschutzversicherungsgesellschaften", "토크나이저", "ok"]
    rows = fragmentation(store, ["o200k", "small"], terms).to_pylist()
    assert [r["tokenizer"] for r in rows] == ["o200k"] * 4 + ["small"] * 4
    for r in rows:
        tok = named_tokenizers(store).get(r["tokenizer"])
        ids = tok.encode_ordinary(r["term"])
        assert r["n_tokens"] == len(ids)
        assert r["pieces"] == [tok.decode_single_token_bytes(i).decode("utf-8", "replace") for i in ids]
    assert [r["n_tokens"] for r in rows[:4]] == sorted((r["n_tokens"] for r in rows[:4]), reverse=True)


def test_mixed_tokenizers_in_one_batch(store):
    """fragmentation's cross join hands the UDFs batches naming several tokenizers, NULL too."""
    rows = [("small", "hello world"), ("o200k", "naïve"), ("o200k", "x y"), ("small", "naïve"), (None, "z"),
            ("o200k", "hello")]
    got = store.execute("SELECT tokens(m, t), token_count(m, t) FROM (VALUES " +
                        ", ".join("(?, ?)" for _ in rows) + ") v(m, t)", [x for r in rows for x in r]).fetchall()
    for (name, text), (pieces, count) in zip(rows, got):
        if name is None:
            assert pieces is None and count is None
            continue
        tok = named_tokenizers(store).get(name)
        ids = tok.encode_ordinary(text)
        assert count == len(ids)
        assert pieces == [tok.decode_single_token_bytes(i).decode("utf-8", "replace") for i in ids]


def test_merge_curve(store):
    rows = merge_curve(store, "bl").to_pylist()
    merges = store.execute("SELECT is_super, idx, count FROM sqltok_store.merges WHERE model = 'bl' "
                           "ORDER BY is_super, idx").fetchall()
    assert [(r["kind"] == "super", r["idx"], r["count"]) for r in rows] == merges
    assert {r["kind"] for r in rows} == {"regular", "super"}
    with pytest.raises(ModelNotFoundError, match="no model named 'nope'"):
        merge_curve(store, "nope")


def test_group_type_token_ratios(store):
    rows = group_type_token_ratios(store, sqltok.Source(table="valid"), by="lang", model="small").to_pylist()
    docs = store.execute("SELECT text, lang FROM valid").fetchall()
    tok = named_tokenizers(store).get("small")
    for r in rows:
        texts = [t for t, lang in docs if lang == r["group"]]
        if r["unit"] == "pretokens":
            units = [p for t in texts for p in oracle.pretokenize(t)]
        else:
            found = candidates_arrow(tok, pa.array(texts, pa.large_string())).to_pylist()
            units = [tuple(c) for cs in found for c in cs]
        assert (r["unique_count"], r["total"]) == (len(set(units)), len(units))
        assert r["type_token_ratio"] == pytest.approx(len(set(units)) / len(units), rel=1e-12)
    assert sum(r["unit"] == "pretokens" for r in rows) == 13 and sum(r["unit"] == "candidates" for r in rows) > 5
