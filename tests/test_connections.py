"""One database instance, many connections: cursors (DuckDB's way to use threads) and other
connections to the same file share sqltok's functions and named tokenizers, safely."""
from __future__ import annotations

import subprocess
import sys
import threading

import duckdb

import sqltok
from conftest import sqltok_home

DOCS = ["the quick brown fox jumps over the lazy dog", "it is one of the best ways to be sure",
        "Grüße aus Köln, 2026!"] * 30


def _docs(con) -> None:
    con.execute("CREATE OR REPLACE TABLE docs AS SELECT unnest(?) AS text", [DOCS])


def _at_once(train, runs: list[tuple[str, int]]) -> None:
    """train(name, size) for every run, each on a thread of its own, all at once; no run may fail."""
    errors = []

    def run(name: str, size: int) -> None:
        try:
            train(name, size)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=r) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _same_as_alone(con, train, runs: list[tuple[str, int]]) -> None:
    """Each model equals the one `train(con, name, size)` makes alone on a connection of its own."""
    alone = duckdb.connect()
    sqltok.register(alone)
    _docs(alone)
    for name, size in runs:
        train(alone, name, size)
        assert sqltok.load_model(con, name) == sqltok.load_model(alone, name)


def test_cursors_share_functions_and_tokenizers(bundled):
    con = duckdb.connect()
    sqltok.register(con)
    cur = con.cursor()
    sqltok.register(cur)  # no error: the functions are the instance's
    cur.execute("SELECT sqltok_load('r50k', ?)", [str(bundled("r50k_base.tiktoken"))]).fetchall()
    assert con.execute("SELECT token_count('r50k', 'hello world')").fetchall() == [(2,)]
    assert cur.execute("SELECT encode_usmallint('r50k', 'hello')").fetchall() == [([31373],)]  # macros too
    assert sqltok.named_tokenizers.named_tokenizers(cur) is sqltok.named_tokenizers.named_tokenizers(con)


def _threads(con) -> int:
    return con.execute("SELECT current_setting('threads')").fetchone()[0]


def test_threads_train_and_encode_at_once_on_cursors():
    """DuckDB's settings are the instance's: a run that changed one for a while (threads, say) would
    leave it changed, or bring DuckDB down, when another run changes it at the same moment."""
    con = duckdb.connect(config={"threads": 4})
    sqltok.register(con)
    _docs(con)
    runs = [(f"m{i}", 260 + 10 * i) for i in range(3)]

    def train(name: str, size: int) -> None:
        cur = con.cursor()
        sqltok.train_bpe(cur, "SELECT text FROM docs", size, name)
        cur.execute("SELECT sum(token_count(?, text)) FROM docs", [name]).fetchall()

    _at_once(train, runs)
    assert _threads(con) == 4
    _same_as_alone(con, lambda c, name, size: sqltok.train_bpe(c, "SELECT text FROM docs", size, name), runs)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=sqltok_home())


def test_a_second_connection_outlives_the_first(tmp_path):
    """Closing the connection that defined the functions leaves another connection's use intact (DuckDB
    alone would crash the process here)."""
    db = tmp_path / "w.duckdb"
    out = _run(f"""
import duckdb, sqltok
a = duckdb.connect({str(db)!r}); sqltok.register(a)
sqltok.train_bpe(a, "SELECT 'hello world hello there' AS text", 260, "m")
b = duckdb.connect({str(db)!r}); sqltok.register(b)
a.close(); del a
import gc; gc.collect()
print(b.execute("SELECT token_count('m', 'hello world')").fetchall()[0][0])
""")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().isdigit()


def test_functions_without_a_registered_connection_fail_clearly(tmp_path):
    db = tmp_path / "w.duckdb"
    out = _run(f"""
import duckdb, sqltok
a = duckdb.connect({str(db)!r}); sqltok.register(a)
sqltok.train_bpe(a, "SELECT 'hello world hello there' AS text", 260, "m")
b = duckdb.connect({str(db)!r})
a.close(); del a
import gc; gc.collect()
try:
    b.execute("SELECT token_count('m', 'hello world')").fetchall()
except duckdb.Error as e:
    print("error:", e)
""")
    assert out.returncode == 0, out.stderr
    assert "call sqltok.register(con)" in out.stdout


def test_superword_trainings_at_once_on_cursors(monkeypatch):
    """Two BoundlessBPE runs on cursors of one connection, counting candidates at the same moment
    (a barrier holds each until both have their phase-1 model registered): each has its own."""
    import sqltok.bpe.candidate_counts as counts

    barrier, real = threading.Barrier(2, timeout=60), counts.count_units

    def together(*args, **kwargs):
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(counts, "count_units", together)
    con = duckdb.connect(config={"threads": 4})
    sqltok.register(con)
    _docs(con)
    runs = [(f"b{i}", 280 + 20 * i) for i in range(2)]

    def train(c, name: str, size: int) -> None:
        sqltok.train_superword(c, "SELECT text FROM docs", size, name, method="boundless")

    _at_once(lambda name, size: train(con.cursor(), name, size), runs)
    assert _threads(con) == 4
    monkeypatch.setattr(counts, "count_units", real)
    _same_as_alone(con, train, runs)


def test_a_collected_database_lets_its_tokenizers_go(bundled):
    """A process that opens database after database (a server, a notebook) keeps none of their
    tokenizers once their registered connections are collected: nothing else holds them."""
    import gc
    import weakref

    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('r50k', ?)", [str(bundled("r50k_base.tiktoken"))]).fetchall()
    sqltok.train_bpe(con, "SELECT 'hello world hello there' AS text", 260, "m")
    assert con.execute("SELECT token_count('r50k', 'hello'), token_count('m', 'hello')").fetchall() == [(1, 1)]
    reg = sqltok.named_tokenizers.named_tokenizers(con)
    loaded, stored = weakref.ref(reg.get("r50k")), weakref.ref(reg.get("m"))
    del con
    gc.collect()
    assert loaded() is None and stored() is None
