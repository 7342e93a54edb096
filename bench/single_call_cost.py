"""What one single-text call costs, layer by layer, beside the peer's same layers (issue 15).

    python bench/single_call_cost.py CORPUS.parquet [--sizes 8 64 1024 16384 262144] [--mb 0.5] [--rounds 5]
                                     [--bert tokenizer.json] [--o200k o200k_base.tiktoken]

The corpus is cut into texts of each size as `bench/encode.py --modes single` cuts it (`--mb` MB
per size). In one process, each layer is timed over all texts of a size, every layer in turn in each
round (best of `--rounds`, microseconds per call):

- bert-base-uncased `encode`: sqltok `encode(text, allowed_special="all")` (HF's default: special
  tokens' text matched, [CLS] ... [SEP] around), the encoder's own call (`encode_str`: the special-
  token scan, normalizer, pre-tokenizer, lookups and the list of ids), the same counting only (no
  list built), and a call on the empty text (the fixed cost); HF `encode(text)` (its Encoding) and
  `encode(text).ids`.
- o200k `encode_ordinary`: sqltok's method, the encoder's own call (`encode_str`), counting only
  (`token_count`) and the empty text, beside tiktoken's and fastokens' `encode_ordinary` (fastokens
  from the `.tiktoken` file; its ids as a list, `.ids`).
- o200k `decode` of each text's ids (tiktoken's, encoded untimed): sqltok `decode` and
  `decode_bytes`, tiktoken `decode` and `decode_bytes`.

Each layer runs over the texts once untimed before its timed pass in every round, so that no layer
pays for the caches the layer before it (another library) emptied: what is left is each call's own
cost, warm, which is what this benchmark is for (`bench/encode.py --modes single` gives the cold
figures of a fresh process).

Every output is compared with the peer's (ids, texts): a mismatch stops the run. Numbers from a
machine with other work on it are noise; the ratios of one run are what to read.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import SHARED, SIZES, read_docs, single_texts  # noqa: E402 (the sibling benchmark's corpus cuts)

FIXTURES = SHARED / "fixtures" / "tokenizers"


def per_call(calls: dict, items: list, rounds: int) -> dict[str, float]:
    """Microseconds per call of each of `calls` on every item: the best of `rounds`, each round
    timing every call in turn (so that drift hits all alike)."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, fn in calls.items():
            for x in items:  # warm: see the module's docstring
                fn(x)
            t0 = time.perf_counter()
            for x in items:
                fn(x)
            best[name] = min(best[name], time.perf_counter() - t0)
    return {name: 1e6 * s / len(items) for name, s in best.items()}


def layers(args) -> tuple[dict[str, tuple[str, dict]], tuple]:
    """Each layer: (what it is compared with, name -> callable on one item; items are texts for
    `encode` and `encode_ordinary`, id lists for `decode`), and the five tokenizers."""
    import fastokens
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tokenizers import Tokenizer as HFTokenizer

    import sqltok
    from sqltok.pretokenizer.patterns import O200K

    bert = sqltok.Tokenizer.load(args.bert)
    hf = HFTokenizer.from_file(str(args.bert))
    hf.no_padding()
    hf.no_truncation()
    o200k = sqltok.Tokenizer.load(args.o200k)
    tt = tiktoken.Encoding("o200k_base", pat_str=O200K, mergeable_ranks=load_tiktoken_bpe(str(args.o200k)),
                           special_tokens={})
    fast = fastokens.Tokenizer.from_tiktoken(str(args.o200k), pattern=O200K, special_tokens={})
    enc = bert._encoder
    return {
        "encode": ("HF encode().ids", {
            "sqltok encode": lambda t: bert.encode(t, allowed_special="all"),
            "sqltok encoder call": lambda t: enc.encode_str(t, True, False, True),
            "sqltok encoder, count only": lambda t: enc.encode_str(t, True, True, True),
            "sqltok encode('')": lambda t: bert.encode("", allowed_special="all"),
            "HF encode()": hf.encode,
            "HF encode().ids": lambda t: hf.encode(t).ids,
        }),
        "encode_ordinary": ("fastokens encode_ordinary", {
            "sqltok encode_ordinary": o200k.encode_ordinary,
            "sqltok encoder call": o200k._encoder.encode_str,
            "sqltok token_count": o200k.token_count,
            "sqltok encode_ordinary('')": lambda t: o200k.encode_ordinary(""),
            "tiktoken encode_ordinary": tt.encode_ordinary,
            "fastokens encode_ordinary": lambda t: fast.encode_ordinary(t).ids,
        }),
        "decode": ("tiktoken decode", {
            "sqltok decode": o200k.decode,
            "sqltok decode_bytes": o200k.decode_bytes,
            "tiktoken decode": tt.decode,
            "tiktoken decode_bytes": tt.decode_bytes,
        }),
    }, (bert, hf, o200k, tt, fast)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="Parquet or JSON-lines corpus (column/key text)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--mb", type=float, default=0.5, help="MB of texts per size")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bert", type=Path, default=FIXTURES / "bert-base-uncased" / "tokenizer.json")
    ap.add_argument("--o200k", type=Path, default=FIXTURES / "o200k_base" / "o200k_base.tiktoken")
    args = ap.parse_args()
    import sqltok

    docs = read_docs(args.corpus, "text")
    table, (bert, hf, o200k, tt, fast) = layers(args)
    print(f"# {' '.join(sys.argv)}\n# sqltok from {Path(sqltok.__file__).parent}; best of {args.rounds} rounds, "
          "microseconds per call; x = reference layer's time / this layer's")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            cut = single_texts("corpus", docs, size, args.mb, Path(tmp) / f"{size}.parquet")
            texts = pq.read_table(cut["path"]).column("text").to_pylist()
            ids = [tt.encode_ordinary(t) for t in texts]
            if [bert.encode(t, allowed_special="all") for t in texts] != [hf.encode(t).ids for t in texts]:
                raise SystemExit(f"{size} B: sqltok's bert ids differ from HF's")
            if [o200k.encode_ordinary(t) for t in texts] != ids or \
                    [fast.encode_ordinary(t).ids for t in texts] != ids:
                raise SystemExit(f"{size} B: o200k ids differ from tiktoken's")
            if [o200k.decode(i) for i in ids] != [tt.decode(i) for i in ids]:
                raise SystemExit(f"{size} B: sqltok's o200k decode differs from tiktoken's")
            print(f"\n-- {size:,} B x {len(texts):,} texts")
            for what, (reference, calls) in table.items():
                items = ids if what == "decode" else texts
                times = per_call(calls, items, args.rounds)
                for name, us in times.items():
                    print(f"  {name:30s} {us:10.3f} us   x {times[reference] / us:6.2f}")


if __name__ == "__main__":
    main()
