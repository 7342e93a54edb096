"""Extension benchmark: `sqltok extend` on a corpus, time per stage, peak RSS and its regression
report, beside training the same number of tokens from bytes (the only way to get a vocabulary for
the new domain that HF `tokenizers` offers: it has no incremental training, tokenizers #879).

    python bench/extend.py CORPUS BASE [--add 2000] [--threads 2] [--text-column text] [--lines]

BASE is an HF byte-level BPE tokenizer.json with the GPT-4o pattern (o200k's:
../shared/fixtures/tokenizers/o200k_base/tokenizer.json), a `.tiktoken` file with it
(../shared/fixtures/tokenizers/o200k_base/o200k_base.tiktoken) or a reference `.model` file. Each run is a
fresh subprocess (its own peak RSS) training into a DuckDB file in a temporary folder. The
from-bytes run is HF's BpeTrainer at the base's vocabulary size plus --add, on the same documents.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from child import READ_DOCS, run_child

EXTEND_CHILD = r"""
import json, resource, sys, time, duckdb, sqltok
from sqltok.extend.extend import extend_model
corpus, col, lines, base, add, threads, db = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], \
    int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
t0 = time.perf_counter()
con = duckdb.connect(db)
con.execute(f"SET threads = {threads}")
sqltok.register(con)
src = sqltok.Source(path=corpus, text_key=col, text_mode="line" if lines else None)
r = extend_model(con, base, src, add, "bench")
g = r.regression
print(json.dumps({"total": time.perf_counter() - t0, "stages": r.seconds, "merges": r.merges,
                  "new_tokens": r.new_tokens, "n_vocab": r.n_vocab, "bytes": g.bytes,
                  "bpt_before": g.bytes_per_token_before, "bpt_after": g.bytes_per_token_after,
                  "texts_changed": g.texts_changed, "documents": g.documents, "old_ids_changed": g.old_ids_changed,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

HF_CHILD = READ_DOCS + r"""
import json, resource, sys, time
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from sqltok.pretokenizer.patterns import O200K
corpus, col, lines, vocab = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
docs = read_docs(corpus, col, lines)
t0 = time.perf_counter()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(O200K), behavior="isolated"),
                                             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
tok.train_from_iterator(docs, trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
print(json.dumps({"total": time.perf_counter() - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="Parquet or JSONL documents, or a text file with --lines")
    ap.add_argument("base", help="a tokenizer.json or .tiktoken file (GPT-4o pattern) or a reference .model file")
    ap.add_argument("--add", type=int, default=2000)
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-hf", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
    lines = "1" if args.lines else "0"
    with tempfile.TemporaryDirectory() as tmp:
        ours = run_child(EXTEND_CHILD, [args.corpus, args.text_column, lines, args.base, str(args.add),
                                        str(args.threads), os.path.join(tmp, "bench.duckdb")], env)
    stages = ", ".join(f"{k} {v:.2f}s" for k, v in ours["stages"].items())
    print(f"sqltok extend +{args.add}: {ours['total']:.2f}s ({stages}) peak {ours['peak_rss_mb']:.0f} MB; "
          f"{ours['new_tokens']} new tokens, ids 0..{ours['n_vocab'] - 1}; {ours['bytes'] / 1e6:.1f} MB: bytes per "
          f"token {ours['bpt_before']:.3f} -> {ours['bpt_after']:.3f}, {ours['texts_changed']:,} of "
          f"{ours['documents']:,} texts encode differently, {ours['old_ids_changed']} old ids changed", flush=True)
    if not args.skip_hf:
        hf = run_child(HF_CHILD, [args.corpus, args.text_column, lines, str(ours["n_vocab"])], env)
        print(f"HF BpeTrainer from bytes to {ours['n_vocab']:,} tokens: {hf['total']:.2f}s peak "
              f"{hf['peak_rss_mb']:.0f} MB; HF / sqltok extend = {hf['total'] / ours['total']:.2f}x", flush=True)
    print(json.dumps(ours))


if __name__ == "__main__":
    main()
