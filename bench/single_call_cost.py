"""What one single-text call costs, layer by layer, beside the peer's same layers (issue 15).

    python bench/single_call_cost.py CORPUS.parquet [--sizes 8 64 1024 16384 262144] [--mb 0.5] [--rounds 5]
                                     [--bert tokenizer.json] [--o200k o200k_base.tiktoken]
                                     [--callgrind] [--only encode encode_ordinary decode]

The corpus is cut into texts of each size as `bench/encode.py --modes single` cuts it (`--mb` MB
per size). In one process, each layer is timed over all texts of a size, every layer in turn in each
round (best of `--rounds`, microseconds per call):

- bert-base-uncased `encode`: sqltok `encode(text, allowed_special="all")` (HF's default: special
  tokens' text matched, [CLS] ... [SEP] around), the encoder's own call (`encode_str`: the special-
  token matching, normalizer, pre-tokenizer, lookups and the list of ids), the same counting only (no
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

With `--callgrind` the same layers are counted instead of timed, for a machine with other work on
it: the script reruns itself under `valgrind --tool=callgrind` (one process, each thread counted
apart), and each layer's one warm pass over the texts (after its untimed one) is counted alone on the
main thread, between two callgrind client requests (a small C helper compiled on the spot: zero the
counts, dump them); reported are instructions per call and the peer's count / this layer's. "loop only" is the Python loop and lambda around a call,
counted the same way. `--only` keeps some of the three groups.

Every output is compared with the peer's (ids, texts): a mismatch stops the run. Timed numbers from a
machine with other work on it are noise; the ratios of one run are what to read, or the counts.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import SHARED, SIZES, read_docs, single_texts  # noqa: E402 (the sibling benchmark's corpus cuts)

FIXTURES = SHARED / "fixtures" / "tokenizers"
GROUPS = ("encode", "encode_ordinary", "decode")


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


#: The client requests around one counted pass (valgrind/callgrind.h); a no-op outside valgrind.
MARKS_C = r"""
#include <valgrind/callgrind.h>
void sqltok_collect_on(void) { CALLGRIND_ZERO_STATS; }
void sqltok_collect_off(const char* what) { CALLGRIND_DUMP_STATS_AT(what); }
"""


def callgrind_marks(tmp: Path) -> ctypes.CDLL:
    """The compiled client requests (`sqltok_collect_on`, `sqltok_collect_off(label)`)."""
    src, lib = tmp / "marks.c", tmp / "marks.so"
    src.write_text(MARKS_C)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    marks = ctypes.CDLL(str(lib))
    marks.sqltok_collect_off.argtypes = [ctypes.c_char_p]
    return marks


def counted(calls: dict, items: list, marks: ctypes.CDLL, size: int) -> None:
    """One counted pass of each of `calls` over the items (after an untimed one), each dumped
    under the label "size|name|number of items"."""
    for name, fn in {"loop only": lambda x: None, **calls}.items():
        for x in items:
            fn(x)
        label = f"{size}|{name}|{len(items)}".encode()
        marks.sqltok_collect_on()
        for x in items:
            fn(x)
        marks.sqltok_collect_off(label)


def read_counts(out_dir: Path) -> dict[tuple[int, str], float]:
    """(size, layer) -> instructions per call, from the dumps `counted` triggered."""
    counts = {}
    for f in out_dir.glob("callgrind.out.*"):
        text = f.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if label and total:
            size, name, n = label.group(1).split("|")
            counts[(int(size), name)] = int(total.group(1)) / int(n)
    return counts


def layers(args) -> dict[str, tuple[str, dict, Callable, Callable | None]]:
    """Each group of `args.only`: (the layer compared with, name -> callable on one item, the check
    of sqltok's outputs against the peer's on a list of texts, what makes a text an item: None for
    the text itself, tiktoken's ids of it for `decode`)."""
    import sqltok

    out = {}
    if "encode" in args.only:
        from tokenizers import Tokenizer as HFTokenizer

        bert = sqltok.Tokenizer.load(args.bert)
        hf = HFTokenizer.from_file(str(args.bert))
        hf.no_padding()
        hf.no_truncation()
        enc = bert._encoder
        out["encode"] = ("HF encode().ids", {
            "sqltok encode": lambda t: bert.encode(t, allowed_special="all"),
            "sqltok encoder call": lambda t: enc.encode_str(t, True, False, match_special=True),
            "sqltok encoder, count only": lambda t: enc.encode_str(t, True, True, match_special=True),
            "sqltok encode('')": lambda t: bert.encode("", allowed_special="all"),
            "HF encode()": hf.encode,
            "HF encode().ids": lambda t: hf.encode(t).ids,
        }, lambda texts: [bert.encode(t, allowed_special="all") for t in texts] == [hf.encode(t).ids for t in texts],
            None)
    if "encode_ordinary" in args.only or "decode" in args.only:
        import fastokens
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from sqltok.pretokenizer.patterns import O200K

        o200k = sqltok.Tokenizer.load(args.o200k)
        tt = tiktoken.Encoding("o200k_base", pat_str=O200K, mergeable_ranks=load_tiktoken_bpe(str(args.o200k)),
                               special_tokens={})
        fast = fastokens.Tokenizer.from_tiktoken(str(args.o200k), pattern=O200K, special_tokens={})
        out["encode_ordinary"] = ("fastokens encode_ordinary", {
            "sqltok encode_ordinary": o200k.encode_ordinary,
            "sqltok encoder call": o200k._encoder.encode_str,
            "sqltok token_count": o200k.token_count,
            "sqltok encode_ordinary('')": lambda t: o200k.encode_ordinary(""),
            "tiktoken encode_ordinary": tt.encode_ordinary,
            "fastokens encode_ordinary": lambda t: fast.encode_ordinary(t).ids,
        }, lambda texts: [o200k.encode_ordinary(t) for t in texts] == [tt.encode_ordinary(t) for t in texts]
            == [fast.encode_ordinary(t).ids for t in texts], None)
        out["decode"] = ("tiktoken decode", {
            "sqltok decode": o200k.decode,
            "sqltok decode_bytes": o200k.decode_bytes,
            "tiktoken decode": tt.decode,
            "tiktoken decode_bytes": tt.decode_bytes,
        }, lambda texts: all(o200k.decode(i) == tt.decode(i) for i in map(tt.encode_ordinary, texts)),
            tt.encode_ordinary)
    return {g: out[g] for g in args.only if g in out}


def size_texts(args, docs: list[str], tmp: Path) -> dict[int, list[str]]:
    """The texts of each size, cut as `bench/encode.py --modes single` cuts them."""
    return {size: pq.read_table(single_texts("corpus", docs, size, args.mb, tmp / f"{size}.parquet")["path"])
            .column("text").to_pylist() for size in args.sizes}


def under_callgrind(args) -> dict[tuple[int, str], float]:
    """Rerun this script under callgrind (`--callgrind-child`), and its counts per call."""
    with tempfile.TemporaryDirectory() as out:
        argv = [a for a in sys.argv[1:] if a != "--callgrind"]
        subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--dump-instr=no",
                        f"--callgrind-out-file={out}/callgrind.out", sys.executable, __file__, *argv,
                        "--callgrind-child"], check=True, stderr=subprocess.DEVNULL, env={**os.environ})
        return read_counts(Path(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="Parquet or JSON-lines corpus (column/key text)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--mb", type=float, default=0.5, help="MB of texts per size")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bert", type=Path, default=FIXTURES / "bert-base-uncased" / "tokenizer.json")
    ap.add_argument("--o200k", type=Path, default=FIXTURES / "o200k_base" / "o200k_base.tiktoken")
    ap.add_argument("--callgrind", action="store_true", help="count instructions (callgrind) instead of timing")
    ap.add_argument("--only", nargs="+", default=list(GROUPS), choices=list(GROUPS))
    ap.add_argument("--callgrind-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import sqltok

    docs = read_docs(args.corpus, "text")
    table = layers(args)
    with tempfile.TemporaryDirectory() as tmp:
        texts = size_texts(args, docs, Path(tmp))
        if args.callgrind_child:
            marks = callgrind_marks(Path(tmp))
            for size in args.sizes:
                for _, calls, _, item in table.values():
                    counted(calls, texts[size] if item is None else list(map(item, texts[size])), marks, size)
            return
        for size in args.sizes:
            for what, (_, _, check, _) in table.items():
                if not check(texts[size]):
                    raise SystemExit(f"{size} B: sqltok's {what} differs from the peer's")
        counts = under_callgrind(args) if args.callgrind else None
        unit = "instructions per call (callgrind)" if counts else f"best of {args.rounds} rounds, microseconds per call"
        print(f"# {' '.join(sys.argv)}\n# sqltok from {Path(sqltok.__file__).parent}; {unit}; "
              "x = reference layer's cost / this layer's")
        for size in args.sizes:
            print(f"\n-- {size:,} B x {len(texts[size]):,} texts")
            for reference, calls, _, item in table.values():
                items = texts[size] if item is None else list(map(item, texts[size]))
                if counts is None:
                    cost, fmt = per_call(calls, items, args.rounds), "{:10.3f} us"
                else:
                    cost, fmt = {name: counts[(size, name)] for name in ["loop only", *calls]}, "{:10.0f} Ir"
                for name, c in cost.items():
                    print(f"  {name:30s} {fmt.format(c)}   x {cost[reference] / max(c, 1e-9):6.2f}")


if __name__ == "__main__":
    main()
