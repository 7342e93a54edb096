"""Candidates found by pretoken in what phase 1 made of each (`PretokenUnits`, the path training
takes right after phase 1) against those the phase-1 encoder finds: the same on the 13-language
sample and on hypothesis corpora, per script and simple pretokenization."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from sqltok.bpe._candidates import PretokenUnits
from sqltok.bpe.candidates import candidates_arrow, pretoken_candidates, token_letters
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.bpe.train import merge_pretokens, merges_model

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def _both_ways(texts: list[str | None], vocab_size: int, script_aware: bool) -> tuple[list, list]:
    """The candidates of `texts` under a phase-1 model trained on them: by pretoken, and encoded."""
    counts = Counter(p for t in texts if t for p in sqltok.pretokenize(t, script_aware))
    pretokens = pa.table({"pretoken": pa.array(list(counts), pa.large_string()),
                          "n": pa.array(list(counts.values()), pa.int64())})
    merged = merge_pretokens(pretokens, vocab_size)
    p1 = merges_model(merged, script_aware)
    units = PretokenUnits(pretokens.column(0), merged["singles"], token_letters(p1.tokens), script_aware)
    arr = pa.array(texts, pa.large_string())
    return (pretoken_candidates(units, arr).to_pylist(),
            candidates_arrow(BPETokenizer.from_model(p1, "p1"), arr).to_pylist())


@pytest.mark.parametrize("script_aware", [True, False])
@pytest.mark.parametrize("vocab_size,at_least", [(300, 1), (2000, 1000), (5000, 2000)])
def test_the_encoders_candidates_on_every_language(script_aware, vocab_size, at_least):
    texts = [json.loads(line)["text"] for line in SAMPLE.open(encoding="utf-8")]
    by_pretoken, encoded = _both_ways(texts + [None, ""], vocab_size, script_aware)
    assert by_pretoken == encoded
    assert sum(len(row) for row in by_pretoken if row) >= at_least


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab cd\u00e9\u4e2d\u6587\u0e01 ,.'\n1A\u0301")), max_size=40),
                min_size=1, max_size=12),
       st.booleans(), st.sampled_from([245, 260, 400]))
def test_the_encoders_candidates_on_any_corpus(texts, script_aware, vocab_size):
    by_pretoken, encoded = _both_ways(texts, vocab_size, script_aware)
    assert by_pretoken == encoded


def test_units_need_one_single_per_pretoken():
    with pytest.raises(ValueError, match="differ in length"):
        PretokenUnits(pa.array(["a", "b"]), [1], b"\x01" * 300, True)


def test_sql_names_an_unknown_phase1_run(con):
    with pytest.raises(Exception, match="no phase-1 run is known as 'gone'"):
        con.execute("SELECT sqltok_pretoken_candidate_keys('gone', 'the cat sat')").fetchall()
