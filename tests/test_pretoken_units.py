"""Candidates counted by pretoken in what phase 1 made of each (`PretokenUnits`, the path training
takes right after phase 1), and counted by the phase-1 encoder (the cluster's tasks), against the
candidates the encoder finds text by text: the same on the 13-language sample and on hypothesis
corpora, per script and simple pretokenization, whole or read in pieces."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from sqltok.bpe._candidates import PretokenUnits
from sqltok.bpe.candidates import (candidate_counts, candidate_ids, candidates_arrow, pretoken_candidate_counts,
                                   token_letters)
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.bpe.train import merge_pretokens, merges_model

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def _counted(out: pa.Array) -> Counter:
    """A counting call's candidates (all on its first row) as a Counter of id tuples."""
    rows = out.to_pylist()
    assert all(row == [] for row in rows[1:])
    pairs = rows[0] if rows else []
    ids = candidate_ids(pa.array([p["unit"] for p in pairs], pa.large_binary())).to_pylist()
    found: Counter = Counter()
    for key, pair in zip(ids, pairs):
        found[tuple(key)] += pair["n"]
    return found


def _three_ways(texts: list[str | None], vocab_size: int, script_aware: bool,
                piece_bytes: int = 0) -> tuple[Counter, Counter, Counter]:
    """The candidates of `texts` under a phase-1 model trained on them: counted by pretoken, counted
    by the encoder, and (the oracle) found by the encoder text by text."""
    counts = Counter(p for t in texts if t for p in sqltok.pretokenize(t, script_aware))
    pretokens = pa.table({"pretoken": pa.array(list(counts), pa.large_string()),
                          "n": pa.array(list(counts.values()), pa.int64())})
    merged = merge_pretokens(pretokens, vocab_size)
    p1 = merges_model(merged, script_aware)
    units = PretokenUnits(pretokens.column(0), merged["singles"], token_letters(merged["tokens"]), script_aware)
    arr = pa.array(texts, pa.large_string())
    tok = BPETokenizer.from_model(p1, "p1")
    oracle = Counter(tuple(c) for row in candidates_arrow(tok, arr).to_pylist() if row for c in row)
    return (_counted(pretoken_candidate_counts(units, arr, piece_bytes)),
            _counted(candidate_counts(tok, arr, piece_bytes)), oracle)


@pytest.mark.parametrize("script_aware", [True, False])
@pytest.mark.parametrize("vocab_size,at_least", [(300, 1), (2000, 1000), (5000, 2000)])
def test_the_encoders_candidates_on_every_language(script_aware, vocab_size, at_least):
    texts = [json.loads(line)["text"] for line in SAMPLE.open(encoding="utf-8")]
    by_pretoken, encoded, oracle = _three_ways(texts + [None, ""], vocab_size, script_aware, 64)
    assert by_pretoken == encoded == oracle
    assert sum(oracle.values()) >= at_least


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab cd\u00e9\u4e2d\u6587\u0e01 ,.'\n1A\u0301")), max_size=40),
                min_size=1, max_size=12),
       st.booleans(), st.sampled_from([245, 260, 400]))
def test_the_encoders_candidates_on_any_corpus(texts, script_aware, vocab_size):
    by_pretoken, encoded, oracle = _three_ways(texts, vocab_size, script_aware)
    assert by_pretoken == encoded == oracle


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab cd\n\n\nA\u4e2d ,.")), max_size=60), min_size=1, max_size=8),
       st.booleans(), st.integers(1, 12))
def test_candidates_counted_in_pieces_count_as_whole(texts, script_aware, piece_bytes):
    """Read in pieces cut where no candidate crosses (after a line feed, before an ASCII letter),
    texts give the candidates they give whole."""
    by_pretoken, encoded, oracle = _three_ways(texts, 300, script_aware, piece_bytes)
    assert by_pretoken == encoded == oracle


def test_a_counting_table_grows_past_its_first_size():
    """3,000 phrases of two two-letter words (about 2,900 distinct candidates) in one text: more than
    its table's first 1,024 slots hold, so it grows and still counts each once."""
    words = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "aeiou"]
    text = " ".join(f"{words[(7 * i) % 130]} {words[(11 * i + i // 130) % 130]}." for i in range(3000))
    by_pretoken, encoded, oracle = _three_ways([text], 2000, True)
    assert by_pretoken == encoded == oracle
    assert len(oracle) > 2000


def test_units_need_one_single_per_pretoken():
    with pytest.raises(ValueError, match="differ in length"):
        PretokenUnits(pa.array(["a", "b"]), [1], b"\x01" * 300, True)


def test_sql_names_an_unknown_phase1_run(con):
    with pytest.raises(Exception, match="no phase-1 run is known as 'gone'"):
        con.execute("SELECT sqltok_pretoken_candidate_counts('gone', 'the cat sat')").fetchall()


def _holds_letter(token: bytes | None) -> bool:
    """The oracle: UTF-8 text in which the `regex` module finds a letter."""
    try:
        return token is not None and regex.search(r"\p{L}", token.decode("utf-8")) is not None
    except UnicodeDecodeError:
        return False


_TOKEN_TEXT = st.text(st.sampled_from(list("a Z9_-\u00e9\u0301\u4e2d\u0e01\u02b0\u2160\U0001d400\U0001f600"
                                           "\u0660\u10fc\ud7a3")), max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=6), _TOKEN_TEXT.map(str.encode),
                          _TOKEN_TEXT.map(lambda t: t.encode()[:-1])), max_size=30))
def test_token_letters_as_the_regex_module(tokens):
    """A token may be a unit when it is valid UTF-8 holding a letter: cut characters, stray
    continuation bytes, surrogates and overlong forms are not text."""
    flags = token_letters(pa.array(tokens, pa.large_binary()))
    assert list(flags) == [int(_holds_letter(t)) for t in tokens]


def test_token_letters_on_every_character():
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    flags = token_letters(pa.array([c.encode() for c in chars], pa.binary()))
    assert [c for c, f in zip(chars, flags) if f] == [c for c in chars if regex.match(r"\p{L}", c)]
    assert token_letters(pa.array([b"\xed\xa0\x80a", b"\xc0\xa1", b"a\x80"])) == b"\x00\x00\x00"
