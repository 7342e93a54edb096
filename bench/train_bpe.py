"""Training benchmark: sqltok vs Hugging Face `tokenizers` BpeTrainer on the same corpus, in one run.

    python bench/train_bpe.py CORPUS.parquet [--vocab 32768 131072] [--threads 2] [--text-column text]

Each trainer runs in a fresh subprocess (so peak RSS is its own); sqltok trains into a DuckDB file in a
temporary folder. HF gets the same documents, the GPT-4o split + ByteLevel, and the same thread count.
Prints wall time per stage, peak RSS, and the ratio HF time / sqltok time.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from child import run_child

SQLTOK_CHILD = r"""
import json, resource, sys, time, duckdb, sqltok
corpus, col, vocab, threads, db = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
t0 = time.perf_counter()
con = duckdb.connect(db)
con.execute(f"SET threads = {threads}")
sqltok.register(con)
rep = sqltok.train_bpe(con, sqltok.Source(path=corpus, text_key=col), vocab, "bench", simple=False)
total = time.perf_counter() - t0
print(json.dumps({"total": total, "stages": rep.seconds, "merges": rep.merges, "bytes": rep.bytes,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

HF_CHILD = r"""
import json, resource, sys, time
import pyarrow.parquet as pq
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from sqltok.pretokenizer.patterns import O200K as MAIN_PATTERN
corpus, col, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(MAIN_PATTERN), behavior="isolated"),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
def docs():
    for batch in pq.ParquetFile(corpus).iter_batches(columns=[col], batch_size=4096):
        yield from (t for t in batch.column(0).to_pylist() if t)
tok.train_from_iterator(docs(), trainer=trainer)
total = time.perf_counter() - t0
print(json.dumps({"total": total, "vocab": tok.get_vocab_size(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="a Parquet file of documents")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--vocab", type=int, nargs="+", default=[32768, 131072])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-hf", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
    rows = []
    for vocab in args.vocab:
        with tempfile.TemporaryDirectory() as tmp:
            ours = run_child(SQLTOK_CHILD, [args.corpus, args.text_column, str(vocab), str(args.threads),
                                            os.path.join(tmp, "bench.duckdb")], env)
        hf = None if args.skip_hf else run_child(HF_CHILD, [args.corpus, args.text_column, str(vocab)], env)
        gb = ours["bytes"] / 1e9
        stages = ", ".join(f"{k} {v:.1f}s" for k, v in ours["stages"].items())
        print(f"vocab {vocab:>7}: sqltok {ours['total']:.1f}s ({stages}; {ours['total'] / gb:.0f} s/GB) "
              f"peak {ours['peak_rss_mb']:.0f} MB", flush=True)
        if hf:
            print(f"{'':>14} HF BpeTrainer {hf['total']:.1f}s peak {hf['peak_rss_mb']:.0f} MB; "
                  f"HF / sqltok = {hf['total'] / ours['total']:.2f}x", flush=True)
        rows.append({"vocab": vocab, "sqltok": ours, "hf": hf})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
