"""Counting by batch (`batch_pretoken_counts`, `sqltok_pretoken_counts`): each batch's distinct
pretokens with their counts on its first row, equal to counting every pretoken one by one, for every
pattern, NULL and empty texts, batches whose table must grow, and long texts counted in pieces."""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from sqltok.pretokenizer._batch_counts import batch_pretoken_counts
from sqltok.pretokenizer._pieces import PRETOKEN_CUTS
from sqltok.pretokenizer._pretokenize import PATTERN_IDS
from test_pieces import TEXTS


def _counts(out: pa.Array) -> Counter:
    rows = out.to_pylist()
    assert all(row == [] for row in rows[1:])  # everything on the first row
    return Counter({pair["unit"]: pair["n"] for pair in (rows[0] if rows else [])})


def _expected(texts, pattern: str) -> Counter:
    pid = PATTERN_IDS[pattern]
    return Counter(p for t in texts if t for p in sqltok.pretokenize(t, pattern=pid))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=60)), max_size=20), st.sampled_from(sorted(PATTERN_IDS)))
def test_a_batch_counts_every_pretoken(texts, pattern):
    out = batch_pretoken_counts(pa.array(texts, pa.large_string()), PATTERN_IDS[pattern])
    assert len(out) == len(texts)
    assert _counts(out) == _expected(texts, pattern)


def test_the_table_grows_past_its_first_size():
    """40,000 words of 1 to 30 letters (37,683 distinct), then the first 4,000 again: found again after
    the table grew, where their places were computed anew from their bytes (bytes_hash, where the
    first insert hashed short ones as words: the two must agree at every length)."""
    def word(n: int) -> str:
        return "".join(chr(97 + n // 26 ** k % 26) for k in range(1 + n % 30))

    texts = [" ".join(word(400 * i + j) for j in range(400)) for i in range(100)]
    texts += texts[:10]
    out = batch_pretoken_counts(pa.array(texts), PATTERN_IDS["o200k"])
    assert _counts(out) == _expected(texts, "o200k") and len(_counts(out)) > 37000


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=6), st.sampled_from(sorted(PATTERN_IDS)), st.integers(1, 12))
def test_long_texts_counted_in_pieces_count_as_whole(texts, pattern, piece_bytes):
    """Cut at the pattern's cut points (the cuts `sqltok_pieces` makes for it, looking back across a
    piece's start), a text's pretokens are the whole text's."""
    out = batch_pretoken_counts(pa.array(texts, pa.large_string()), PATTERN_IDS[pattern], piece_bytes,
                                *PRETOKEN_CUTS[pattern])
    assert _counts(out) == _expected(texts, pattern)


def test_an_unknown_pattern_is_refused():
    with pytest.raises(ValueError, match="pattern id"):
        batch_pretoken_counts(pa.array(["a"]), 99)


def test_sql_sums_the_batches(con):
    con.execute("CREATE TABLE docs AS SELECT 'the cat ' || (i % 7)::VARCHAR || ' sat' AS text FROM range(5000) t(i)")
    got = dict(con.execute("SELECT c.unit, sum(c.n) FROM (SELECT unnest(sqltok_pretoken_counts(text, 'script_aware')) "
                           "AS c FROM docs) GROUP BY c.unit").fetchall())
    texts = [r[0] for r in con.execute("SELECT text FROM docs").fetchall()]
    assert got == _expected(texts, "script_aware")
    with pytest.raises(Exception, match="sqltok_pretoken_counts: the pattern must be one constant"):
        con.execute("SELECT sqltok_pretoken_counts(text, 'nope') FROM docs").fetchall()
