"""WordPiece training benchmark: sqltok vs Hugging Face `tokenizers` WordPieceTrainer on the same
corpus, in one run.

    python bench/train_wordpiece.py CORPUS [--vocab 30522] [--threads 2] [--text-column text] [--lines]

CORPUS is Parquet or JSONL (a `text` column or key), or with `--lines` a text file of one document a
line. Each trainer runs in a fresh subprocess (so peak RSS is its own), both with
`BertWordPieceTokenizer.train`'s settings (BERT normalizer and pre-tokenizer, min_frequency 2,
limit_alphabet 1000, the five BERT special tokens): sqltok trains into a DuckDB file in a temporary
folder; HF reads the same documents (from DuckDB, untimed reading excluded: they are fed from a
list in memory) with the same thread count. Prints wall time per stage, peak RSS, the ratio HF time /
sqltok time, and whether the two vocabularies hold the same tokens, with those only one holds when
not (HF numbers its `##` characters in hash order, tokenizers #1794, so the order can differ, and
where characters tie at `limit_alphabet` two HF runs can hold different ones; see
sqltok/wordpiece/_train.pyx).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from child import READ_DOCS, run_child

SQLTOK_CHILD = r"""
import json, resource, sys, time, duckdb, sqltok
corpus, col, lines, vocab, threads, db = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), \
    int(sys.argv[5]), sys.argv[6]
t0 = time.perf_counter()
con = duckdb.connect(db)
con.execute(f"SET threads = {threads}")
sqltok.register(con)
src = sqltok.Source(path=corpus, text_key=col, text_mode="line" if lines else None)
rep = sqltok.train_wordpiece(con, src, vocab, "bench")
total = time.perf_counter() - t0
vocab_json = json.loads(con.execute("SELECT content FROM sqltok_store.model_files WHERE model = 'bench'").fetchall()[0][0])
print(json.dumps({"total": total, "stages": rep.seconds, "merges": rep.merges, "bytes": rep.bytes,
                  "unique_words": rep.unique_words, "tokens": sorted(vocab_json["model"]["vocab"]),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

HF_CHILD = READ_DOCS + r"""
import json, resource, sys, time
from tokenizers import BertWordPieceTokenizer
corpus, col, lines, vocab = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
docs = read_docs(corpus, col, lines)
t0 = time.perf_counter()
tok = BertWordPieceTokenizer()
tok.train_from_iterator(docs, vocab_size=vocab, show_progress=False)
total = time.perf_counter() - t0
print(json.dumps({"total": total, "tokens": sorted(tok.get_vocab()),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="Parquet or JSONL documents, or a text file with --lines")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--lines", action="store_true", help="a text file: one document per line")
    ap.add_argument("--vocab", type=int, nargs="+", default=[30522])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads), TOKENIZERS_PARALLELISM="true")
    lines = "1" if args.lines else "0"
    rows = []
    for vocab in args.vocab:
        with tempfile.TemporaryDirectory() as tmp:
            ours = run_child(SQLTOK_CHILD, [args.corpus, args.text_column, lines, str(vocab), str(args.threads),
                                            os.path.join(tmp, "bench.duckdb")], env)
        hf = run_child(HF_CHILD, [args.corpus, args.text_column, lines, str(vocab)], env)
        mine, theirs = set(ours.pop("tokens")), set(hf.pop("tokens"))
        same, only_ours, only_hf = mine == theirs, sorted(mine - theirs), sorted(theirs - mine)
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in ours["stages"].items())
        print(f"vocab {vocab:>7}: sqltok {ours['total']:.2f}s ({stages}) peak {ours['peak_rss_mb']:.0f} MB; "
              f"{ours['bytes'] / 1e6:.1f} MB, {ours['unique_words']:,} unique words", flush=True)
        print(f"{'':>14} HF WordPieceTrainer {hf['total']:.2f}s peak {hf['peak_rss_mb']:.0f} MB; "
              f"HF / sqltok = {hf['total'] / ours['total']:.2f}x; same tokens: {same}", flush=True)
        if not same:
            print(f"{'':>14} {len(only_ours)} tokens only sqltok's (e.g. {only_ours[:8]}), {len(only_hf)} only "
                  f"HF's (e.g. {only_hf[:8]})", flush=True)
        rows.append({"vocab": vocab, "sqltok": ours, "hf": hf, "same_tokens": same,
                     "only_sqltok": only_ours, "only_hf": only_hf})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
