"""The greedy split of supermerge candidates (paper Appendix B): Apriori n-gram counting, one SQL
query per n-gram length pruned by joins on the previous length, then each candidate cut left to right
into its longest frequent n-grams and the pieces counted again."""
from __future__ import annotations

import duckdb

from sqltok.sql_files import sql_text
from sqltok.training.counting import Counts, counted
from sqltok.training.work_tables import WorkTables

MAX_NGRAM = 30
MIN_COUNT = 15


def greedy_split(con: duckdb.DuckDBPyConnection, candidates: Counts, c_min: int, work: WorkTables) -> Counts:
    """The pieces of `candidates` (n-grams that occur at least `c_min` times, floored at MIN_COUNT)."""
    c_min = max(c_min, MIN_COUNT)
    runs, grams = work.table("runs"), [work.table("grams_1")]
    con.execute(sql_text("ngram_start").format(candidates=candidates.table, runs=runs, grams=grams[0], c_min=c_min))
    while len(grams) < MAX_NGRAM:
        nxt = work.table(f"grams_{len(grams) + 1}")
        con.execute(sql_text("ngram_step").format(target=nxt, prev=grams[-1], size=len(grams) + 1, c_min=c_min))
        if con.execute(f"SELECT count(*) FROM {nxt}").fetchall()[0][0] == 0:
            break
        grams.append(nxt)
    union = " UNION ALL ".join(f"SELECT cid, i, {k} AS size FROM {t}" for k, t in enumerate(grams[1:], 2)) or \
        "SELECT NULL::BIGINT AS cid, NULL::BIGINT AS i, NULL::INTEGER AS size WHERE false"
    pieces = work.table("pieces")
    con.execute(sql_text("greedy_split").format(target=pieces, grams=union, runs=runs, size=len(grams)))
    return counted(con, pieces, "candidate")
