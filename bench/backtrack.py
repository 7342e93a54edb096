"""Backtracking BPE against the merge loop, by pretoken length: where `Encoder(backtrack_from=)` pays.

    python bench/backtrack.py CORPUS.jsonl|parquet [...] [--mb 30] [--rounds 5] [--buckets 2 12 24 48 96]

The distinct pretokens (o200k pattern) of the first --mb MB of each corpus that are not o200k tokens
(as bench/first_seen.py takes them), cut into length buckets (bytes, upper bounds), each bucket's
pretokens dealt into --rounds disjoint parts, 200 per document, one per line. Each round encodes
one part, on one thread, with sqltok's merge loop (`backtrack_from=-1`), with sqltok backtracking
every pretoken (`backtrack_from=1`), both with atoms off (`atoms=False`: the two methods alone, not
`char_atoms`' start from whole characters), and with tiktoken (for scale; no cache): the parts are disjoint
and every pretoken in them distinct, so no cache helps although the encoders stay loaded. Printed
per bucket: MB/s (best round) and the median per-round ratio to the merge loop; the ids' sha256 must
be the same for all three.
"""
from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import SHARED, read_docs  # noqa: E402
from first_seen import PER_DOC, rare_pretokens  # noqa: E402


def ids_digest(lists) -> str:
    h = hashlib.sha256()
    for ids in lists:
        h.update(b"".join(i.to_bytes(4, "little", signed=True) for i in ids))
    return h.hexdigest()[:16]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", type=Path, nargs="+")
    ap.add_argument("--text-key", default="text")
    ap.add_argument("--mb", type=float, default=30, help="MB of each corpus to take pretokens from")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--buckets", type=int, nargs="+", default=[2, 12, 24, 48, 96, 1 << 30],
                    help="upper bounds of the length buckets, in bytes")
    ap.add_argument("--o200k", type=Path, default=SHARED / "fixtures" / "tokenizers" / "o200k_base")
    args = ap.parse_args(argv)

    import pyarrow as pa
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from sqltok.bpe._encode import Encoder
    from sqltok.bpe.tiktoken_file import read_tiktoken
    from sqltok.pretokenizer._pretokenize import pattern_id

    path = str(args.o200k / "o200k_base.tiktoken")
    ranks = load_tiktoken_bpe(path)
    spec = read_tiktoken(Path(path))
    ref = tiktoken.Encoding("o200k_base", pat_str=spec.pattern, mergeable_ranks=ranks, special_tokens={})
    rare = [p for c in args.corpora for p in rare_pretokens(read_docs(c, args.text_key), args.mb, ranks)]
    rare = list(dict.fromkeys(rare))
    pid = pattern_id(spec.pattern)
    encoders = {b: Encoder(spec.tokens, spec.pairs, spec.byte_ids, spec.direct, pid, backtrack_from=b, atoms=False)
                for b in (-1, 1)}
    print(f"# {len(rare):,} distinct pretokens that are not o200k tokens, from {', '.join(c.name for c in args.corpora)}; "
          f"one thread, {args.rounds} rounds of disjoint parts")
    print(f"{'bytes':>11} {'pretokens':>9} {'loop MB/s':>9} {'back MB/s':>9} {'back/loop':>9} "
          f"{'tiktoken':>9} {'tik/loop':>8}  ids")
    low = 1
    for high in args.buckets:
        bucket = [p for p in rare if low <= len(p.encode("utf-8")) <= high]
        label = f"{low}-{high}" if high < 1 << 30 else f"{low}-"
        low = high + 1
        if len(bucket) < args.rounds:
            continue
        parts = [bucket[r::args.rounds] for r in range(args.rounds)]
        docs = [["\n".join(p[i:i + PER_DOC]) for i in range(0, len(p), PER_DOC)] for p in parts]
        secs = {"loop": [], "back": [], "tiktoken": []}
        digests = {k: [] for k in secs}
        for part in docs:
            arr = pa.array(part, pa.string())
            for name, run in (("loop", lambda: encoders[-1].encode_arrow(arr, as_lists=True)),
                              ("back", lambda: encoders[1].encode_arrow(arr, as_lists=True)),
                              ("tiktoken", lambda: ref.encode_ordinary_batch(part, num_threads=1))):
                t = time.perf_counter()
                out = run()
                secs[name].append(time.perf_counter() - t)
                digests[name].append(ids_digest(out))
        mb = [sum(len(d.encode("utf-8")) for d in part) / 1e6 for part in docs]
        best = {k: max(m / s for m, s in zip(mb, v)) for k, v in secs.items()}
        ratio = {k: statistics.median(lo / s for lo, s in zip(secs["loop"], v)) for k, v in secs.items()}
        same = "same" if digests["loop"] == digests["back"] == digests["tiktoken"] else "DIFFER"
        print(f"{label:>11} {len(bucket):>9,} {best['loop']:9.1f} {best['back']:9.1f} {ratio['back']:8.2f}x "
              f"{best['tiktoken']:9.1f} {ratio['tiktoken']:7.2f}x  {same}")


if __name__ == "__main__":
    main()
