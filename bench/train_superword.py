"""Superword training benchmark: the full BoundlessBPE and SuperBPE pipelines, time per stage, peak RSS.

    python bench/train_superword.py CORPUS.parquet [--vocab 32768 131072] [--threads 2] \
                                    [--rounds 2] [--text-column text] [--greedy-split]

Each pipeline runs in a fresh subprocess (so peak RSS is its own) and trains into a DuckDB file in a
temporary folder, from the corpus: BoundlessBPE (phase 1 to the full vocabulary, candidates, phase 2
with Algorithm 1), and the paper's "matching" SuperBPE (`supermerges="match"`: the same phase-1 run and
candidates, s taken from BoundlessBPE's phase 2, then SuperBPE's phase 2 on the first r merges).
Each configuration runs `--rounds` times (rounds go through all configurations in turn, so drift on
a shared machine hits all alike); the fastest round is reported, with the spread (best - worst) / best.
Prints seconds per stage, seconds per GB of text, peak RSS, the type-token ratios of pretokens and
candidates, and the ratio to the reference Rust implementation's published 2,510 s per GB (paper
Table 1, vocab 131,072; the same figure `../shared/bench/README.md` measured on these machines for
100 MB: 124.3 s BPE + 126.9 s phase 2).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from child import run_child

REFERENCE_S_PER_GB = 2510.0

CHILD = r"""
import json, resource, sys, time, duckdb, sqltok
corpus, col, vocab, threads, db, method, greedy = sys.argv[1:8]
t0 = time.perf_counter()
con = duckdb.connect(db)
con.execute(f"SET threads = {int(threads)}")
sqltok.register(con)
options = {"supermerges": "match"} if method == "superbpe" else {}
rep = sqltok.train_superword(con, sqltok.Source(path=corpus, text_key=col), int(vocab), "bench",
                             method=method, greedy_split=greedy == "1", **options)
total = time.perf_counter() - t0
print(json.dumps({"total": total, "stages": rep.seconds, "bytes": rep.bytes, "regular": rep.regular_merges,
                  "supermerges": rep.supermerges, "pretoken_ttr": rep.pretoken_type_token_ratio,
                  "candidate_ttr": rep.candidate_type_token_ratio, "unique_candidates": rep.unique_candidates,
                  "unique_pieces": rep.unique_pieces,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="a Parquet file of documents")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--vocab", type=int, nargs="+", default=[32768, 131072])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--greedy-split", action="store_true", help="also split candidates (Appendix B)")
    args = ap.parse_args()
    configs = [(vocab, method) for vocab in args.vocab for method in ("boundless", "superbpe")]
    results: dict = {c: [] for c in configs}
    for _ in range(args.rounds):
        for vocab, method in configs:
            with tempfile.TemporaryDirectory() as tmp:
                results[(vocab, method)].append(run_child(CHILD, [
                    args.corpus, args.text_column, str(vocab), str(args.threads), os.path.join(tmp, "bench.duckdb"),
                    method, "1" if args.greedy_split else "0"]))
    rows = []
    for (vocab, method), runs in results.items():
        r = min(runs, key=lambda x: x["total"])
        spread = (max(x["total"] for x in runs) - r["total"]) / r["total"]
        gb = r["bytes"] / 1e9
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
        print(f"{method:>9} vocab {vocab:>7}: {r['total']:.1f} s = {r['total'] / gb:.0f} s/GB "
              f"({REFERENCE_S_PER_GB * gb / r['total']:.1f}x faster than the reference's "
              f"{REFERENCE_S_PER_GB:.0f} s/GB); spread {spread:.0%}; peak {r['peak_rss_mb']:.0f} MB")
        print(f"{'':>26}stages (s): {stages}")
        print(f"{'':>26}{r['regular']} regular merges + {r['supermerges']} supermerges; type-token "
              f"ratio pretokens {r['pretoken_ttr']:.4f}, candidates {r['candidate_ttr']:.4f} "
              f"({r['unique_candidates']:,} unique)"
              + ("" if r["unique_pieces"] is None else f", {r['unique_pieces']:,} pieces after the split"))
        rows.append({"vocab": vocab, "method": method, "spread": spread, **r})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
