"""One word with no cut point, at doubling sizes, encoded with a SentencePiece model: sqltok beside
`sentencepiece` (and HF `tokenizers` on the model's tokenizer.json, when given) in the same run.

    python bench/long_words.py --model tokenizer.model.v1 [--hf-json tokenizer.json] \
        [--sizes 0.25 1 4] [--rounds 2]

A BPE model merges such a word on a heap of candidates (n log n), where most candidates go stale;
this is where a long base64 blob, a minified line or a run of one character goes. Words: one
character repeated, random lowercase letters (a fixed seed) and spaces (one "▁" run), each of the
given sizes in MB. Printed per word and size: seconds (best of --rounds, the libraries alternating),
the ratio of each peer's time to sqltok's, whether its ids are sentencepiece's, and sqltok's time
ratio to the half size (about 2 when n log n stays near linear).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = {"repeated": lambda n, rng: "a" * n,
         "letters": lambda n, rng: "".join(rng.choices("abcdefghijklmnopqrstuvwxyzäöü", k=n)),
         "spaces": lambda n, rng: " " * n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a SentencePiece .model file")
    ap.add_argument("--hf-json", help="the same model as a tokenizer.json, for HF tokenizers")
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.25, 1, 4], help="MB")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    import sentencepiece as spm
    import sqltok
    libs = {"sqltok": sqltok.Tokenizer.load(args.model).encode_ordinary,
            "sentencepiece": spm.SentencePieceProcessor(model_file=args.model).encode}
    if args.hf_json:
        import tokenizers
        hf = tokenizers.Tokenizer.from_file(args.hf_json)
        libs["hf"] = lambda t: hf.encode(t, add_special_tokens=False).ids
    print(f"{'word':9} {'MB':>5} " + " ".join(f"{lib:>13}" for lib in libs) + "   peer/sqltok   sqltok vs half")
    for word, make in WORDS.items():
        last = None
        for mb in args.sizes:
            text = make(int(mb * 2**20), random.Random(1))
            best, ids = {lib: float("inf") for lib in libs}, {}
            for _ in range(args.rounds):
                for lib, encode in libs.items():
                    t = time.perf_counter()
                    ids[lib] = encode(text)
                    best[lib] = min(best[lib], time.perf_counter() - t)
            same = {lib: ids[lib] == ids["sentencepiece"] for lib in libs}
            ratios = " ".join(f"{lib} {best[lib] / best['sqltok']:.2f}x{'' if same[lib] else ' (ids differ)'}"
                              for lib in libs if lib != "sqltok")
            growth = f"{best['sqltok'] / last:.2f}" if last else "-"
            print(f"{word:9} {mb:5g} " + " ".join(f"{best[lib]:12.3f}s" for lib in libs)
                  + f"   {ratios}   {growth}" + ("" if same["sqltok"] else "   sqltok ids differ"))
            last = best["sqltok"]


if __name__ == "__main__":
    main()
