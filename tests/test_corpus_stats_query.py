"""A JSONL source's unchecked query (VARCHAR, for statistics and for reading documents again) gives
the rows of its strict query wherever that reads without error; every line must be an object."""
import json

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from sqltok.corpus.sources import SHORT_LINES, Source
from sqltok.register import register
from sqltok.sql_files import sql_text
from sqltok.training.corpus import read_corpus
from sqltok.training.counting import count_corpus
from sqltok.training.work_tables import WorkTables

_values = st.one_of(st.none(), st.text(max_size=40), st.just(""), st.just("a\\\"b\n\u00e9\U0001F600"))
_lines = st.lists(st.one_of(_values.map(lambda v: {"text": v}), st.just({"other": 1}),
                            _values.map(lambda v: {"id": 3, "text": v, "meta": {"x": [1, 2]}})), min_size=1, max_size=30)


def _stats(con, query):
    return con.execute(sql_text("corpus_stats").format(source=query, doubtful="0")).fetchall()[0][:4]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_lines, limit=st.one_of(st.none(), st.integers(1, 10)))
def test_jsonl_unchecked_query_reads_the_rows_of_the_query(tmp_path, lines, limit):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    src = Source(path=str(path), max_documents=limit)
    con = duckdb.connect()
    assert src.unchecked_query() != src.query()
    rows = con.execute(f"SELECT text FROM ({src.query()})").fetchall()
    assert con.execute(f"SELECT text FROM ({src.unchecked_query()})").fetchall() == rows
    corpus = read_corpus(con, src)
    assert corpus.reread == src.short_lines().unchecked_query()
    stats = corpus.stats
    assert (stats.documents, stats.null_documents, stats.empty_documents, stats.bytes) == _stats(con, src.query())


_any_values = st.one_of(_values, st.sampled_from(["123", "-1.5e3", "true", "NaN", "{x", "[1]", "7 days"]),
                        st.integers(-10**20, 10**20), st.floats(allow_nan=False), st.booleans(),
                        st.sampled_from(['[\n 1]', '{"a": 1}', '{\\let']),
                        st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.just("a"), st.one_of(st.integers(), st.text(max_size=5)), max_size=1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_any_values, min_size=1, max_size=12))
def test_the_training_query_refuses_what_the_checked_query_refuses(tmp_path, values):
    """Where no document could be another JSON value, training reads with the VARCHAR query; the rows
    are the checked query's, and a value that is not a string is still refused."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": v}) + "\n" for v in values), encoding="utf-8")
    src = Source(path=str(path))
    con = duckdb.connect()
    query = read_corpus(con, src).query
    try:
        rows = con.execute(f"SELECT text FROM ({src.query()})").fetchall()
    except duckdb.Error as e:
        assert "is not a string" in str(e)
        with pytest.raises(duckdb.Error, match="is not a string"):
            con.execute(f"SELECT text FROM ({query})").fetchall()
        return
    assert con.execute(f"SELECT text FROM ({query})").fetchall() == rows
    if all(v is None or (isinstance(v, str) and v[:1].isalpha() and v not in ("true", "false", "NaN")) for v in values):
        assert query == src.short_lines().unchecked_query()


def test_jsonl_is_read_in_short_line_buffers_unless_a_line_is_longer(tmp_path):
    """Lines up to twice SHORT_LINES are read in its buffers (every core); a longer line falls back to
    the long-line buffers, with the same statistics."""
    con = duckdb.connect()
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    short.write_text('{"text": "a b"}\n' * 3, encoding="utf-8")
    big = "x" * (2 * SHORT_LINES + 1)
    long.write_text(json.dumps({"text": "a b"}) + "\n" + json.dumps({"text": big}) + "\n", encoding="utf-8")
    fast = read_corpus(con, Source(path=str(short)))
    assert f"maximum_object_size = {SHORT_LINES}" in fast.query and fast.stats.bytes == 9
    with pytest.raises(duckdb.InvalidInputException, match="maximum_object_size"):
        con.execute(f"SELECT count(*) FROM ({Source(path=str(long)).short_lines().query()})").fetchall()
    slow = read_corpus(con, Source(path=str(long)))
    assert f"maximum_object_size = {SHORT_LINES}" not in slow.query + slow.reread
    assert (slow.stats.documents, slow.stats.bytes) == (2, 3 + len(big))
    assert con.execute(f"SELECT max(strlen(text)) FROM ({slow.query})").fetchall() == [(len(big),)]


def test_other_sources_take_their_query_for_statistics(tmp_path):
    src = Source(sql="SELECT 'a' AS text")
    assert src.unchecked_query() == src.query()


@pytest.mark.parametrize("line", ['"just a string"', "[1, 2]"])
def test_a_jsonl_line_that_is_not_an_object_is_an_error(tmp_path, line):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "fine"}\n' + line + "\n", encoding="utf-8")
    con = duckdb.connect()
    for query in (Source(path=str(path)).query(), Source(path=str(path)).unchecked_query()):
        with pytest.raises(duckdb.Error, match="line 2: Expected OBJECT"):
            con.execute(f"SELECT count(text) FROM ({query})").fetchall()


def test_counting_hands_on_the_unchecked_query_for_reading_again(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "the cat"}\n{"text": null}\n{"text": "sat"}\n', encoding="utf-8")
    src = Source(path=str(path))
    con = duckdb.connect()
    register(con)
    with WorkTables(con) as work:
        counts = count_corpus(con, src, True, work)
        assert counts.query == src.short_lines().unchecked_query()
        assert counts.pretokens.total == 3
