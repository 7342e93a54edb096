"""Training before and after a change: the same runs against two sqltok source trees, side by side.

    python bench/train_compare.py CORPUS.parquet --trees /work/main . [--vocab 32768 131072] \
                                  [--rounds 3] [--threads 2] [--text-column text]

Each tree must be built in place (`python setup.py build_ext --inplace`). Every run is a fresh
subprocess started in the tree's folder (so that tree's `sqltok` is imported) training into a DuckDB
file of its own: BPE, BoundlessBPE and the matching SuperBPE (`supermerges="match"`) at each vocab
size. Rounds go through all runs in turn, the trees alternating, so drift on a shared machine hits
both alike. Prints, per run, the median over rounds of the per-round ratio second tree / first tree
of the total and of each stage (below 1: the second is faster), and whether both trees made the same
model (sha256 of its reference `.model` text).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile

from child import run_child

CHILD = r"""
import hashlib, json, sys, time, duckdb, sqltok
try:
    from sqltok.bpe.reference_file import dumps
except ImportError:  # a tree from before the one package tree
    from sqltok.formats.reference import dumps
corpus, col, vocab, threads, db, method = sys.argv[1:7]
t0 = time.perf_counter()
con = duckdb.connect(db)
con.execute(f"SET threads = {int(threads)}")
sqltok.register(con)
src = sqltok.Source(path=corpus, text_key=col)
if method == "bpe":
    rep = sqltok.train_bpe(con, src, int(vocab), "bench")
else:
    options = {"supermerges": "match"} if method == "superbpe" else {}
    rep = sqltok.train_superword(con, src, int(vocab), "bench", method=method, **options)
total = time.perf_counter() - t0
model = hashlib.sha256(dumps(sqltok.load_model(con, "bench")).encode()).hexdigest()
print(json.dumps({"total": total, "stages": rep.seconds, "sha256": model}))
"""

METHODS = ("bpe", "boundless", "superbpe")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="a Parquet file of documents")
    ap.add_argument("--trees", nargs=2, required=True, metavar=("BEFORE", "AFTER"),
                    help="two sqltok checkouts, each built in place")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--vocab", type=int, nargs="+", default=[32768, 131072])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    trees = [os.path.abspath(t) for t in args.trees]
    corpus = os.path.abspath(args.corpus)
    runs = [(vocab, method) for vocab in args.vocab for method in METHODS]
    results: dict = {(run, tree): [] for run in runs for tree in trees}
    for r in range(args.rounds):
        for run in runs:
            for tree in trees if r % 2 == 0 else trees[::-1]:
                with tempfile.TemporaryDirectory() as tmp:
                    results[(run, tree)].append(run_child(CHILD, [
                        corpus, args.text_column, str(run[0]), str(args.threads), os.path.join(tmp, "b.duckdb"),
                        run[1]], cwd=tree))
    rows = []
    for vocab, method in runs:
        before, after = results[((vocab, method), trees[0])], results[((vocab, method), trees[1])]
        ratio = {"total": statistics.median(a["total"] / b["total"] for a, b in zip(after, before))}
        for stage in before[0]["stages"]:
            if all(stage in a["stages"] and b["stages"][stage] > 0 for a, b in zip(after, before)):
                ratio[stage] = statistics.median(a["stages"][stage] / b["stages"][stage]
                                                 for a, b in zip(after, before))
        same = {x["sha256"] for x in before + after}
        print(f"{method:>9} vocab {vocab:>7}: after / before = {ratio['total']:.3f} "
              f"(median total {statistics.median(b['total'] for b in before):.1f} s -> "
              f"{statistics.median(a['total'] for a in after):.1f} s); same model: {len(same) == 1}")
        print(f"{'':>26}stages: " + ", ".join(f"{k} {v:.3f}" for k, v in ratio.items() if k != "total"))
        rows.append({"vocab": vocab, "method": method, "ratios": ratio, "same_model": len(same) == 1,
                     "before": before, "after": after})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
