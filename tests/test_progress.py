"""Progress on stderr: a DuckDB query's share done, and ETAs only once they can be trusted."""
import io

import duckdb

from sqltok.progress import Progress, QueryProgress


def test_query_progress_draws_the_running_query_and_restores_settings():
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(20000000)")
    out = io.StringIO()
    with QueryProgress(con, "counting", out, after=0.0):
        for _ in range(3):
            con.execute("SELECT count(DISTINCT i % 1000003) FROM t").fetchall()
    text = out.getvalue()
    assert "counting [" in text and text.endswith("\n") and "100/100 %" in text
    assert con.execute("SELECT current_setting('enable_progress_bar')").fetchall() == [(False,)]


def test_quick_queries_draw_nothing():
    con, out = duckdb.connect(), io.StringIO()
    with QueryProgress(con, "quick", out):
        con.execute("SELECT 42").fetchall()
    assert out.getvalue() == ""


def test_eta_waits_for_a_tenth_done():
    out = io.StringIO()
    bar = Progress("merging", 1000, "merges", out)
    bar.done = 50
    bar._draw(bar.start + 1.0, end="\r")
    assert "ETA ..." in out.getvalue()
    bar.done = 200
    bar._draw(bar.start + 2.0, end="\n")
    assert "ETA 8s" in out.getvalue()
