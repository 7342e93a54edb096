"""Unigram training benchmark: sqltok vs sentencepiece's trainer (`spm_train`) on the same lines, in one run.

    python bench/train_unigram.py CORPUS [--vocab 8000 32000] [--text-column text] [--threads 2] [--max-mb MB]

CORPUS is Parquet, JSONL (.gz/.zst) or a text file; its documents are first written once, untimed, as
a text file of lines, which every trainer then reads (spm_train's input; sqltok reads it with
`--lines`). Each trainer runs in a fresh subprocess (its own peak RSS): sqltok (DuckDB with
`--threads` threads; the Cython stages run on one), spm_train with its default thread count and with
one thread (`num_threads=1`, the oracle). Prints seconds per stage (sqltok: read, words, seeds, em,
prune, finalize), total seconds, CPU seconds (user + system, all threads), peak RSS, whether sqltok's
model has the one-thread oracle's pieces, and the ratios spm_train time / sqltok time, spm_train CPU /
sqltok CPU and spm_train RSS / sqltok RSS.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

import duckdb

from child import run_child

SQLTOK_CHILD = r"""
import json, resource, sys, time, duckdb
from sqltok.register import register
from sqltok.corpus.sources import Source
from sqltok.training.stopwatch import Stopwatch
from sqltok.unigram.spec import UnigramSpec
from sqltok.unigram.train import train_model_proto
lines, vocab, threads, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t0 = time.perf_counter()
con = duckdb.connect()
con.execute(f"SET threads = {threads}")
register(con)
watch = Stopwatch()
proto, report = train_model_proto(con, Source(path=lines, text_mode="line"), UnigramSpec(vocab_size=vocab), watch)
total = time.perf_counter() - t0
use = resource.getrusage(resource.RUSAGE_SELF)
open(out, "wb").write(proto)
print(json.dumps({"total": total, "cpu": use.ru_utime + use.ru_stime, "stages": watch.seconds,
                  "sentences": report.sentences, "words": report.words, "peak_rss_mb": use.ru_maxrss / 1024}))
"""

SPM_CHILD = r"""
import json, resource, sys, time
import sentencepiece as spm
lines, vocab, threads, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
flags = {"num_threads": threads} if threads > 0 else {}
t0 = time.perf_counter()
spm.SentencePieceTrainer.train(input=lines, model_prefix=out[:-len(".model")], model_type="unigram",
                               vocab_size=vocab, minloglevel=2, **flags)
total = time.perf_counter() - t0
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"total": total, "cpu": use.ru_utime + use.ru_stime, "peak_rss_mb": use.ru_maxrss / 1024}))
"""

SAME_CHILD = r"""
import json, sys
import sentencepiece as spm
a, b = (spm.SentencePieceProcessor(model_file=f) for f in sys.argv[1:3])
same = a.get_piece_size() == b.get_piece_size() and all(
    a.id_to_piece(i) == b.id_to_piece(i) and abs(a.get_score(i) - b.get_score(i)) <= 1e-5
    for i in range(a.get_piece_size()))
print(json.dumps({"same": same}))
"""


def write_lines(corpus: str, column: str, path: str, max_mb: float | None) -> int:
    """Write the corpus's documents to `path` as lines (a text corpus is copied as is); its bytes."""
    if not corpus.endswith((".parquet", ".jsonl", ".json", ".gz", ".zst")):
        with open(corpus, "rb") as src, open(path, "wb") as dst:
            data = src.read(int(max_mb * 1e6)) if max_mb else src.read()
            dst.write(data[:data.rfind(b"\n") + 1] if max_mb else data)
        return os.path.getsize(path)
    read = f"read_parquet('{corpus}')" if corpus.endswith(".parquet") else f"read_json('{corpus}')"
    written = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for batch in duckdb.sql(f'SELECT "{column}" FROM {read} WHERE "{column}" IS NOT NULL').to_arrow_reader():
            for text in batch.column(0).to_pylist():
                out.write(text + "\n")
                written += len(text.encode()) + 1
                if max_mb and written >= max_mb * 1e6:
                    return written
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--vocab", type=int, nargs="+", default=[8000, 32000])
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads for sqltok (default 2)")
    ap.add_argument("--max-mb", type=float, help="use only the first MB of text (to try the script small)")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    with tempfile.TemporaryDirectory() as tmp:
        lines = os.path.join(tmp, "lines.txt")
        size = write_lines(args.corpus, args.text_column, lines, args.max_mb)
        print(f"corpus {args.corpus}: {size / 1e6:.1f} MB of lines")
        for vocab in args.vocab:
            ours = os.path.join(tmp, f"sqltok_{vocab}.model")
            s = run_child(SQLTOK_CHILD, [lines, str(vocab), str(args.threads), ours], cwd=root)
            peers = {}
            for label, threads in (("spm_train (default threads)", 0), ("spm_train (1 thread)", 1)):
                out = os.path.join(tmp, f"spm_{threads}_{vocab}.model")
                peers[label] = (run_child(SPM_CHILD, [lines, str(vocab), str(threads), out], cwd=root), out)
            same = run_child(SAME_CHILD, [ours, peers["spm_train (1 thread)"][1]], cwd=root)["same"]
            print(f"\nvocab {vocab}: {s['sentences']:,} distinct sentences, {s['words']:,} distinct words; "
                  f"sqltok's model {'equals' if same else 'DIFFERS from'} spm_train --num_threads=1's")
            print(f"  {'trainer':<30}{'seconds':>10}{'CPU s':>9}{'peak RSS MB':>14}{'time ratio':>12}"
                  f"{'CPU ratio':>11}{'RSS ratio':>11}")
            print(f"  {'sqltok':<30}{s['total']:>10.2f}{s['cpu']:>9.2f}{s['peak_rss_mb']:>14.0f}{'1.00':>12}"
                  f"{'1.00':>11}{'1.00':>11}")
            for label, (p, _) in peers.items():
                print(f"  {label:<30}{p['total']:>10.2f}{p['cpu']:>9.2f}{p['peak_rss_mb']:>14.0f}"
                      f"{p['total'] / s['total']:>12.2f}{p['cpu'] / s['cpu']:>11.2f}"
                      f"{p['peak_rss_mb'] / s['peak_rss_mb']:>11.2f}")
            print("  sqltok stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in s["stages"].items()))
            print(json.dumps({"vocab": vocab, "sqltok": s, "peers": {k: v[0] for k, v in peers.items()},
                              "same": same}))


if __name__ == "__main__":
    main()
