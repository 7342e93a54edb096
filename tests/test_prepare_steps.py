"""Cleaning, the validation split (shared with train --holdout) and balancing, each alone."""
import math
import warnings
from functools import cache

import duckdb
import pytest
from hypothesis import given, settings, strategies as st

import sqltok
from sqltok.corpus.balance import balance_query, language_shares, parse_ratios, target_shares
from sqltok.corpus.clean import CleanSettings, clean_query, invalid_utf8_count
from sqltok.corpus.sources import Source
from sqltok.corpus.split import split_query
from sqltok.errors import SqltokError
from sqltok.evaluate import holdout_split


def test_clean_blobs_controls_forms_and_lengths(con):
    con.execute("CREATE TABLE raw AS SELECT * FROM (VALUES (1, 'caf\\x65\\xCC\\x81'::BLOB, 'a'), "
                "(2, 'bad \\xFF byte'::BLOB, 'b'), (3, 'ctl\\x01\\x7F\\xC2\\x85 ok\\x09line\\x0A'::BLOB, 'c'), "
                "(4, NULL, 'd'), (5, ''::BLOB, 'e'), (6, 'x'::BLOB, 'f')) t(doc_id, text, source)")
    assert invalid_utf8_count(con, "SELECT * FROM raw") == 1
    fixed = con.execute(clean_query(con, "SELECT * FROM raw", CleanSettings(form="NFC", min_chars=2))
                        + " ORDER BY doc_id").fetchall()
    assert fixed == [(1, "café", "a"), (2, "bad \ufffd byte", "b"), (3, "ctl ok\tline\n", "c")]
    dropped = con.execute(clean_query(con, "SELECT * FROM raw", CleanSettings("drop", max_chars=5))
                          + " ORDER BY doc_id").fetchall()
    assert [r[0] for r in dropped] == [1, 6]
    with pytest.raises(SqltokError, match="fixed .* or dropped"):
        CleanSettings("keep")
    with pytest.raises(SqltokError, match="normal form"):
        CleanSettings(form="NFX")


def test_holdout_uses_the_prepare_split_and_keeps_what_it_held(con):
    # with texts whose hash is at the cut exactly (10000 * 0.1), which go to training
    con.execute("CREATE TABLE docs AS SELECT 'document ' || i AS text FROM range(3000) r(i) UNION ALL SELECT NULL "
                "UNION ALL (SELECT 'edge ' || i FROM range(100000) r(i) WHERE hash('edge ' || i) % 10000 = 1000 LIMIT 3)")
    train, held = holdout_split(Source(table="docs"), 0.1)
    held_texts = {r[0] for r in con.execute(held.query()).fetchall()}
    # what train --holdout held back before it shared the split: text IS NOT NULL AND hash % 10000 < cut
    before = {r[0] for r in con.execute("SELECT text FROM docs WHERE text IS NOT NULL AND "
                                        "hash(text) % 10000 < 1000").fetchall()}
    assert held_texts == before and 250 < len(held_texts) < 350
    assert con.execute(f"SELECT count(*) FROM ({train.query()})").fetchone()[0] == 3004 - len(before)
    assert held.sql == split_query(Source(table="docs").query(), 0.1, held=True)


@cache
def _registered() -> duckdb.DuckDBPyConnection:
    """One connection for the examples of a hypothesis test (its fixtures would be shared anyway)."""
    return sqltok.register(duckdb.connect())


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.sampled_from(["en", "fr", "ko", "zh", None]), st.integers(1, 60), min_size=1),
       st.floats(0.05, 0.5))
def test_stratified_split_holds_back_each_language_in_proportion(sizes, fraction):
    con = _registered()
    rows = [(lang, f"{lang} doc {i}") for lang, n in sizes.items() for i in range(n)]
    con.execute("CREATE OR REPLACE TABLE docs AS SELECT * FROM (SELECT unnest(?) AS lang, unnest(?) AS text)",
                [[r[0] for r in rows], [r[1] for r in rows]])
    held = con.execute(f"SELECT lang, count(*) FROM ({split_query('SELECT * FROM docs', fraction, True, True)}) "
                       "GROUP BY lang").fetchall()
    train = con.execute(f"SELECT count(*) FROM ({split_query('SELECT * FROM docs', fraction, False, True)})"
                        ).fetchone()[0]
    got = dict(held)
    for lang, n in sizes.items():
        assert got.get(lang, 0) == math.floor(fraction * n + 0.5)  # SQL rounds halves up
    assert train + sum(got.values()) == len(rows)


def _lang_table(con, sizes):
    con.execute("CREATE OR REPLACE TABLE docs AS SELECT row_number() OVER () AS doc_id, lang, lang || i AS text "
                "FROM (SELECT unnest(?) AS lang, unnest(?) AS n), range(n) r(i)",
                [list(sizes), list(sizes.values())])


def test_balance_to_ratios_down_and_oversampling(con):
    _lang_table(con, {"en": 600, "zh": 300, "fr": 90, "de": 10})
    shares = language_shares(con, "SELECT * FROM docs")
    assert [(s.lang, s.documents) for s in shares] == [("en", 600), ("zh", 300), ("fr", 90), ("de", 10)]
    targets = target_shares(shares, parse_ratios("zh=4,en=4,fr=1,de=1"))
    q = balance_query("SELECT * FROM docs", targets, seed=7)
    got = dict(con.execute(f"SELECT lang, count(*) FROM ({q}) GROUP BY lang").fetchall())
    assert got == {"en": 400, "zh": 400, "fr": 100, "de": 100}
    # oversampled: every document at least once, whole repeats plus a remainder; downsampled: no repeats
    per_doc = dict(con.execute(f"SELECT lang, list(DISTINCT c) FROM (SELECT lang, doc_id, count(*) AS c "
                               f"FROM ({q}) GROUP BY ALL) GROUP BY lang").fetchall())
    assert sorted(per_doc["de"]) == [10] and sorted(per_doc["fr"]) == [1, 2] and per_doc["en"] == [1]
    assert con.execute(f"SELECT list(doc_id ORDER BY doc_id, copy) FROM ({q})").fetchone() == \
        con.execute(f"SELECT list(doc_id ORDER BY doc_id, copy) FROM ({q})").fetchone()
    other = balance_query("SELECT * FROM docs", targets, seed=8)
    assert con.execute(f"SELECT list(doc_id ORDER BY doc_id) FROM ({q}) WHERE lang = 'en'").fetchone() != \
        con.execute(f"SELECT list(doc_id ORDER BY doc_id) FROM ({other}) WHERE lang = 'en'").fetchone()


def test_temperature_and_uniform_targets(con):
    _lang_table(con, {"en": 800, "fr": 100})
    shares = language_shares(con, "SELECT * FROM docs")
    t = target_shares(shares, temperature=0.5)
    assert t["en"] / t["fr"] == pytest.approx((800 / 100) ** 0.5)
    assert target_shares(shares, uniform=True) == {"en": 0.5, "fr": 0.5}
    assert target_shares(shares, temperature=1.0) == pytest.approx({"en": 8 / 9, "fr": 1 / 9})


def test_balance_bad_input(con):
    _lang_table(con, {"en": 10, "fr": 5})
    shares = language_shares(con, "SELECT * FROM docs")
    with pytest.warns(UserWarning, match=r"no documents in ko; its languages: en=66\.67%, fr=33\.33%"):
        assert target_shares(shares, parse_ratios("en=1,ko=1")) == {"en": 1.0}
    for bad, message in [("en=0", "must be positive"), ("en=-1", "must be positive"), ("en", "lang=weight"),
                         ("en=x", "lang=weight"), ("en=1,en=2", "twice")]:
        with pytest.raises(SqltokError, match=message):
            parse_ratios(bad)
    with pytest.raises(SqltokError, match="exactly one"):
        target_shares(shares, parse_ratios("en=1"), temperature=0.3)
    with pytest.raises(SqltokError, match="temperature"):
        target_shares(shares, temperature=0.0)
    with warnings.catch_warnings(), pytest.raises(SqltokError, match="none of the languages"):
        warnings.simplefilter("ignore")
        target_shares(shares, parse_ratios("ko=1"))


def test_each_step_from_sql(con):
    con.execute("CREATE TABLE docs AS SELECT i AS doc_id, CASE WHEN i < 80 THEN 'en' ELSE 'fr' END AS lang, "
                "'doc ' || i AS text FROM range(100) r(i)")
    assert con.execute("SELECT lang, documents FROM sqltok_language_shares('SELECT * FROM docs')").fetchall() == [
        ("en", 80), ("fr", 20)]
    assert con.execute("SELECT lang, count(*) FROM sqltok_balance('SELECT * FROM docs', MAP {'en': 1, 'fr': 1}, "
                       "seed := 3) GROUP BY lang ORDER BY lang").fetchall() == [("en", 50), ("fr", 50)]
    t = con.execute("SELECT sqltok_temperature_targets('SELECT * FROM docs', 0.5)").fetchone()[0]
    assert t == {"en": pytest.approx(80 ** 0.5), "fr": pytest.approx(20 ** 0.5)}
    held = con.execute("SELECT count(*) FILTER (WHERE sqltok_held), count(*) FROM "
                       "sqltok_split_by_language('SELECT * FROM docs', fraction := 0.1)").fetchone()
    assert held == (10, 100)
    assert con.execute("SELECT strip_controls('a' || chr(0) || chr(27) || chr(133) || 'b' || chr(9) || chr(10))"
                       ).fetchone()[0] == "ab\t\n"


def test_stratified_split_keeps_copies_on_one_side(con):
    """Balancing repeats documents before the split: the cut fell between copies of one text, which
    then were in train and valid both."""
    con.execute("CREATE OR REPLACE TABLE docs AS SELECT 'en' AS lang, 'en doc ' || (i % 3) AS text FROM range(9) r(i)")
    held = {r[0] for r in con.execute(f"SELECT text FROM ({split_query('SELECT * FROM docs', 0.2, True, True)})")
            .fetchall()}
    train = {r[0] for r in con.execute(f"SELECT text FROM ({split_query('SELECT * FROM docs', 0.2, False, True)})")
             .fetchall()}
    assert held and train and not held & train


def test_stratified_split_with_input_columns_named_like_its_own(con):
    """An input column split_size (or split_rank) stood in for the split's own: split_size = 100 held
    back every document."""
    con.execute("CREATE OR REPLACE TABLE docs AS SELECT 'en' AS lang, 'doc ' || i AS text, 100 AS split_size, "
                "0 AS split_rank FROM range(10) r(i)")
    held = con.execute(f"SELECT count(*) FROM ({split_query('SELECT * FROM docs', 0.2, True, True)})").fetchone()
    assert held == (2,)
