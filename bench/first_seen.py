"""First-seen pretokens: the cost of BPE merging itself, sqltok beside the fastest peers.

    python bench/first_seen.py [CORPUS.parquet|jsonl] [--mb 30] [--rounds 3]

Takes the pretokens (o200k's pattern) of the first --mb MB of a corpus, keeps each one that is not
an o200k token once, in order of first appearance, and encodes them, one per line, 200 per
document: no cache helps and no pretoken maps to one token directly, so nearly all the time goes to
merging. English has ~194k such pretokens in 30 MB, and a cold encode of those 30 MB spends about a
quarter of its time on them. One thread, each run a fresh process after an untimed call on one
sentence (see bench/encode.py), best of --rounds; the sha256 of all ids shows which libraries agree
with tiktoken.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import O200K_SPECIAL, SHARED, read_docs, run_child, summarize  # noqa: E402

VARIANTS = ("sqltok-arrow", "fastokens-flat", "tiktoken")
PER_DOC = 200


def rare_pretokens(docs: list[str], mb: float, ranks: dict[bytes, int]) -> list[str]:
    """The distinct pretokens of the first `mb` MB of `docs` that are not tokens, first seen first."""
    from sqltok.pretokenizer import patterns
    from sqltok.pretokenizer._pretokenize import pattern_id, pretokenize

    pid, budget, seen, rare = pattern_id(patterns.O200K), mb * 1e6, set(), []
    for doc in docs:
        for p in pretokenize(doc, pattern=pid):
            if p not in seen:
                seen.add(p)
                if p.encode("utf-8") not in ranks:
                    rare.append(p)
        budget -= len(doc.encode("utf-8"))
        if budget <= 0:
            break
    return rare


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, nargs="?", default=SHARED / "bench" / "en100.parquet")
    ap.add_argument("--text-key", default="text")
    ap.add_argument("--mb", type=float, default=30, help="MB of the corpus to take pretokens from")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--o200k", type=Path, default=SHARED / "fixtures" / "tokenizers" / "o200k_base")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)

    import pyarrow as pa
    import pyarrow.parquet as pq
    from tiktoken.load import load_tiktoken_bpe

    from sqltok.pretokenizer.patterns import O200K as MAIN_PATTERN

    tt = str(args.o200k / "o200k_base.tiktoken")
    rare = rare_pretokens(read_docs(args.corpus, args.text_key), args.mb, load_tiktoken_bpe(tt))
    docs = ["\n".join(rare[i:i + PER_DOC]) for i in range(0, len(rare), PER_DOC)]
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    tok = {"name": "o200k_base", "sqltok": tt, "tiktoken": tt, "json": str(args.o200k / "tokenizer.json"),
           "pattern": MAIN_PATTERN, "special": O200K_SPECIAL}
    print(f"# {len(rare):,} distinct pretokens that are not tokens, from the first {args.mb:g} MB of "
          f"{args.corpus.name}: {len(docs):,} documents, {nbytes / 1e6:.2f} MB; one thread, best of {args.rounds}")
    with tempfile.TemporaryDirectory(prefix="sqltok-first-seen-") as tmp:
        path = str(Path(tmp) / "rare.parquet")
        pq.write_table(pa.table({"text": pa.array(docs, pa.string())}), path)
        runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
        for _ in range(args.rounds):  # rounds alternate the libraries, so drift hits all alike
            for v in VARIANTS:
                spec = {"mode": "encode", "corpus": path, "variant": v, "threads": 1, "tok": tok, "warmup": True}
                runs[v].append(run_child(spec, args.timeout))
    results = {v: summarize(r, nbytes) for v, r in runs.items()}
    ref = results["tiktoken"].get("sha256")
    mine = results["sqltok-arrow"].get("mb_s")
    for v, s in results.items():
        if "error" in s:
            print(f"{v:16s} error: {s['error']}")
            continue
        ratio = f"{mine / s['mb_s']:.2f}x" if mine else "-"
        print(f"{v:16s} {s['mb_s']:7.2f} MB/s  {len(rare) / s['seconds'] / 1e3:7.0f} k pretokens/s  "
              f"spread {s['spread']:.0%}  sqltok/this {ratio}  sha256 {s['sha256'][:16]} "
              f"{'= tiktoken' if s['sha256'] == ref else 'DIFFERS from tiktoken'}")


if __name__ == "__main__":
    main()
