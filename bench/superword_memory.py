"""Where superword training holds its memory: resident set size and DuckDB's buffer memory per stage.

    python bench/superword_memory.py CORPUS.parquet [--vocab 131072] [--memory-limit 1GB] \
                                     [--method boundless] [--threads 2] [--text-column text]

Trains once in a fresh subprocess (so the peak is the run's own) into a DuckDB file in a temporary
folder, while a sampler thread reads the process's RSS (/proc/self/statm) and DuckDB's buffer-manager
memory (`duckdb_memory()`) every 50 ms. Prints, per stage (the stopwatch's stages, in order; phase 2
runs beside "store"), the peak RSS and the peak of DuckDB's share, and the run's peak RSS
(`ru_maxrss`); the rest of the RSS is Arrow tables and the Cython structures of phase 1 and 2. The
model's `.model` text is hashed (sha256), to check that a change leaves the model as it was.
Memory, unlike time, is fair to measure on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from child import run_child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this checkout's sqltok is the one run

CHILD = r"""
import hashlib, json, os, resource, sys, threading, time, duckdb, sqltok
from sqltok.bpe.reference_file import dumps
from sqltok.training import stopwatch
corpus, col, vocab, threads, db, method, limit = sys.argv[1:8]
con = duckdb.connect(db)
con.execute(f"SET threads = {int(threads)}")
if limit:
    con.execute("SET memory_limit = ?", [limit])
sqltok.register(con)
page = os.sysconf("SC_PAGE_SIZE")
stages, samples, done = [], [], threading.Event()
probe = con.cursor()

def sample():
    while not done.wait(0.05):
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * page
        duck = probe.execute("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()").fetchone()[0]
        samples.append((time.perf_counter(), rss, duck))

timed = stopwatch.Stopwatch.__call__

class Mark:
    def __init__(self, watch, stage):
        self.inner, self.stage = timed(watch, stage), stage
    def __enter__(self):
        stages.append([self.stage, time.perf_counter(), None])
        return self.inner.__enter__()
    def __exit__(self, *exc):
        stages[-1][2] = time.perf_counter()
        return self.inner.__exit__(*exc)

stopwatch.Stopwatch.__call__ = lambda watch, stage: Mark(watch, stage)
sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
t0 = time.perf_counter()
rep = sqltok.train_superword(con, sqltok.Source(path=corpus, text_key=col), int(vocab), "bench", method=method,
                             **({"supermerges": "match"} if method == "superbpe" else {}))
end = time.perf_counter()
done.set()
sampler.join()
stages.append(["phase2 (after store)", stages[-1][2], end])
out = []
for name, a, b in stages:
    inside = [s for s in samples if a <= s[0] <= b] or [min(samples, key=lambda s: abs(s[0] - b))]
    out.append({"stage": name, "seconds": b - a, "peak_rss_mb": max(s[1] for s in inside) / 2**20,
                "peak_duckdb_mb": max(s[2] for s in inside) / 2**20})
cpu = resource.getrusage(resource.RUSAGE_SELF)
digest = hashlib.sha256(dumps(sqltok.load_model(con, "bench")).encode()).hexdigest()
print(json.dumps({"stages": out, "peak_rss_mb": cpu.ru_maxrss / 1024, "wall": end - t0,
                  "cpu": cpu.ru_utime + cpu.ru_stime, "bytes": rep.bytes, "unique_pretokens": rep.unique_pretokens,
                  "unique_candidates": rep.unique_candidates, "candidates": rep.candidates,
                  "regular": rep.regular_merges, "supermerges": rep.supermerges, "sha256": digest}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="a Parquet file of documents")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--vocab", type=int, default=131072)
    ap.add_argument("--memory-limit", default="1GB", help="DuckDB's memory limit ('' for its default)")
    ap.add_argument("--method", choices=("boundless", "superbpe"), default="boundless")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        r = run_child(CHILD, [os.path.abspath(args.corpus), args.text_column, str(args.vocab), str(args.threads),
                              os.path.join(tmp, "m.duckdb"), args.method, args.memory_limit], cwd=ROOT)
    print(f"{args.corpus}: {r['bytes'] / 1e6:,.0f} MB, {r['unique_pretokens']:,} unique pretokens, "
          f"{r['unique_candidates']:,} unique candidates of {r['candidates']:,}; "
          f"{r['regular']:,} merges + {r['supermerges']:,} supermerges; memory limit {args.memory_limit or 'default'}")
    print(f"{'stage':<24} {'seconds':>8} {'peak RSS MB':>12} {'DuckDB MB':>10}")
    for s in r["stages"]:
        print(f"{s['stage']:<24} {s['seconds']:>8.1f} {s['peak_rss_mb']:>12,.0f} {s['peak_duckdb_mb']:>10,.0f}")
    print(f"peak RSS {r['peak_rss_mb']:,.0f} MB; wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s "
          f"({r['cpu'] / (r['bytes'] / 1e9):.1f} CPU s per GB); model sha256 {r['sha256']}")


if __name__ == "__main__":
    main()
