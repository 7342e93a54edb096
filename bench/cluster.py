"""Cluster benchmark: counting (and encoding) with 1 and 2 local Dask workers against the single-process
path, on the same corpus in one run.

    python bench/cluster.py CORPUS.parquet [--vocab 131072] [--methods bpe boundless] [--workers 1 2]
                            [--shard-mb 64] [--memory-limit 1GB] [--worker-threads 1] [--no-encode]

Each configuration runs in a fresh subprocess (its own peak RSS; a new work folder, so nothing is
reused): training into a DuckDB file, then encoding the corpus with the model (one Parquet file in one
process; one Parquet per shard on the cluster). Printed per configuration: wall time per stage (the
map, reduce and load of each kind of unit on the cluster), the bytes the map tasks wrote for the reduce
and the reduce wrote for the coordinator, the peak RSS of the coordinator (which holds the scheduler)
and of each worker process, the CPU seconds of all of them (on a shared machine the ratios of CPU
time say more than wall time); then the ratios single-process / cluster and 1 worker / 2 workers.
A worker gets its share of the cores unless --worker-threads says otherwise: with `--worker-threads 1`
each worker stands for a one-core machine, so that 1 worker / 2 workers measures scaling out rather
than one process's threading against two processes'.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from child import run_child

CHILD = r"""
import glob, json, os, resource, sys, time, duckdb, sqltok
from sqltok.cluster import Cluster, local_cluster
from sqltok.cluster.encoding import encode_shards
from sqltok.encode_files import encode_file
corpus, method, vocab, workers, shard_mb, memory, encode, work, threads = sys.argv[1:10]
vocab, workers, encode, threads = int(vocab), int(workers), encode == "1", int(threads) or None

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def sizes(pattern):
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(work, pattern), recursive=True))

def run(cluster, client):
    con = duckdb.connect(os.path.join(work, "bench.duckdb"))
    if memory:
        con.execute("SET memory_limit = ?", [memory])
    sqltok.register(con)
    src = sqltok.Source(path=corpus)
    t0 = time.perf_counter()
    if method == "bpe":
        rep = sqltok.train_bpe(con, src, vocab, "m", cluster=cluster)
    else:
        rep = sqltok.train_superword(con, src, vocab, "m", method=method, cluster=cluster)
    out = {"train": time.perf_counter() - t0, "stages": rep.seconds}
    if encode:
        t0 = time.perf_counter()
        if cluster is None:
            encode_file(con, "m", src, os.path.join(work, "ids.parquet"), compact=True)
        else:
            encode_shards(cluster, con, "m", src, os.path.join(work, "ids"))
        out["encode"] = time.perf_counter() - t0
    out["map_bytes"] = sizes("cluster/map/**/*.parquet")
    out["reduce_bytes"] = sizes("cluster/reduce/*.parquet")
    out["coordinator_rss_mb"] = rss_mb()
    out["worker_rss_mb"] = sorted(client.run(rss_mb).values()) if client is not None else []
    out["cpu"] = cpu_s() + (sum(client.run(cpu_s).values()) if client is not None else 0)
    return out

if workers == 0:
    result = run(None, None)
else:
    with local_cluster(workers, threads) as client:
        result = run(Cluster(client, os.path.join(work, "cluster"), shard_bytes=int(float(shard_mb) * 2**20)), client)
print(json.dumps(result))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="Parquet, JSONL or text file(s) (a glob) of documents, key `text`")
    ap.add_argument("--vocab", type=int, default=131072)
    ap.add_argument("--methods", nargs="+", default=["bpe", "boundless"], choices=["bpe", "boundless", "superbpe"])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="cluster sizes to run (0 = one process "
                    "is always run first)")
    ap.add_argument("--shard-mb", type=float, default=64, help="MB of input per shard (default 64)")
    ap.add_argument("--memory-limit", default="", help="DuckDB memory limit of the coordinator, e.g. 1GB")
    ap.add_argument("--worker-threads", type=int, default=0, help="threads of each worker (default: its share of "
                    "the cores; 1 makes each worker a one-core machine, so that N workers use N cores)")
    ap.add_argument("--no-encode", action="store_true", help="train only")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    results = {}
    for method in args.methods:
        for workers in [0, *[w for w in args.workers if w > 0]]:
            with tempfile.TemporaryDirectory() as work:
                r = run_child(CHILD, [os.path.abspath(args.corpus), method, str(args.vocab), str(workers),
                                      str(args.shard_mb), args.memory_limit, "0" if args.no_encode else "1", work,
                                      str(args.worker_threads)],
                              cwd=repo)
            results[(method, workers)] = r
            name = "one process" if workers == 0 else f"{workers} worker{'s' * (workers > 1)}"
            stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
            print(f"{method} {name}: train {r['train']:.2f} s ({stages})"
                  + (f"; encode {r['encode']:.2f} s" if "encode" in r else "")
                  + f"; CPU {r['cpu']:.2f} s in all processes")
            print(f"    map -> reduce {r['map_bytes'] / 1e6:,.1f} MB, reduce -> coordinator {r['reduce_bytes'] / 1e6:,.1f} MB; "
                  f"peak RSS coordinator {r['coordinator_rss_mb']:,.0f} MB, workers "
                  f"{', '.join(f'{x:,.0f}' for x in r['worker_rss_mb']) or '-'} MB")
        base = results[(method, 0)]
        for workers in [w for w in args.workers if w > 0]:
            r = results[(method, workers)]
            count = base["stages"]["pretokenize_and_count"] / r["stages"]["pretokenize_and_count"]
            line = (f"{method}: one process / {workers} workers: counting {count:.2f}x, train {base['train'] / r['train']:.2f}x, "
                    f"CPU {base['cpu'] / r['cpu']:.2f}x")
            if "encode" in r:
                line += f", encode {base['encode'] / r['encode']:.2f}x"
            reduce = sum(v for k, v in r["stages"].items() if k.endswith("_reduce"))
            print(line + f"; reduce {reduce / r['train']:.1%} of the training time")
        if 1 in args.workers and 2 in args.workers:
            one, two = results[(method, 1)], results[(method, 2)]
            print(f"{method}: 1 worker / 2 workers: counting "
                  f"{one['stages']['pretokenize_and_count'] / two['stages']['pretokenize_and_count']:.2f}x"
                  + (f", encode {one['encode'] / two['encode']:.2f}x" if "encode" in one else ""))
    print(json.dumps({f"{m}/{w}": r for (m, w), r in results.items()}))


if __name__ == "__main__":
    main()
