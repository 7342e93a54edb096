"""Compare two builds of sqltok on the same work, one thread: instructions (callgrind, exact and
independent of other load) and CPU seconds (in-process, alternating old and new).

Each workload loads what it needs, then runs the measured calls: o200k `encode_arrow` on the first
--mb MB of the corpus (a cold call, and a warm call after it), WordPiece (bert-base-uncased) on the
same texts, `normalize_arrow` NFC and NFKC, and the supermerge candidates of o200k. Under callgrind
only the measured calls are counted (`--toggle-collect` on their Cython wrapper), so loading does not
blur the figure. The warm workload makes a cold call first: its CPU time is the warm call's alone,
its instructions those of both calls less the cold workload's. Instructions need valgrind.

    python bench/build_compare.py CORPUS.parquet OLD_CHECKOUT NEW_CHECKOUT [--mb 30] [--rounds 3]

Both checkouts must be built in place (`python setup.py build_ext --inplace`). Run it on a quiet
machine for CPU seconds that mean something; the instruction counts hold anywhere. Prints a table:
per workload the old and new figures and new/old.
"""
import argparse
import lzma
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tokenizers"
# The Cython wrapper of each workload's measured call (callgrind's demangled names; old builds keep
# candidates in Encoder, new ones in sqltok.bpe._candidates).
TOGGLES = {
    "encode_cold": ["__pyx_pw_*Encoder_*encode_arrow(*"],
    "encode_warm": ["__pyx_pw_*Encoder_*encode_arrow(*"],
    "wordpiece": ["__pyx_pw_*WordPieceEncoder_*encode_arrow(*"],
    "nfc": ["__pyx_pw_*_normalize_*normalize_arrow(*"],
    "nfkc": ["__pyx_pw_*_normalize_*normalize_arrow(*"],
    "candidates": ["__pyx_pw_*candidates_arrow(*"],
}


def texts(corpus: Path, mb: float) -> pa.Array:
    """The first `mb` MB of the corpus's `text` column, as one large_string array."""
    col = pq.read_table(corpus, columns=["text"]).column("text").combine_chunks().cast(pa.large_string())
    sizes = pa.compute.binary_length(col).to_numpy().cumsum()
    return col.slice(0, int((sizes < mb * 1e6).sum()) + 1)


def unpacked(name: str, scratch: Path) -> Path:
    path = scratch / name
    if not path.exists():
        path.write_bytes(lzma.decompress((DATA / f"{name}.xz").read_bytes()))
    return path


def run_workload(name: str, corpus: Path, mb: float, scratch: Path) -> float:
    """Run one workload in this process (sqltok from sys.path); returns the CPU seconds of its last call."""
    from sqltok import Tokenizer
    try:  # where the tree keeps its normalizer (before the one package tree: sqltok._normalize)
        from sqltok.normalizers._normalize import normalize_arrow
    except ImportError:
        from sqltok._normalize import normalize_arrow

    data = texts(corpus, mb)
    if name == "wordpiece":
        tok = Tokenizer.load(unpacked("bert-base-uncased_tokenizer.json", scratch))
        calls = [lambda: tok.encode_arrow(data, threads=1)]
    elif name in ("nfc", "nfkc"):
        calls = [lambda: normalize_arrow(data, name.upper(), 1)]
    else:
        tok = Tokenizer.load(unpacked("o200k_base.tiktoken", scratch))
        if name == "candidates":
            try:  # the tree's candidate extraction, wherever that tree keeps it
                from sqltok.bpe.candidates import candidates_arrow, letter_mask
            except ImportError:
                candidates_arrow, letter_mask = (lambda t, d, threads: t.candidates_arrow(d, threads=threads),
                                                 lambda t: t.letter_mask())
            letter_mask(tok)  # built once per tokenizer: not part of the call
            calls = [lambda: candidates_arrow(tok, data, threads=1)]
        else:
            calls = [lambda: tok.encode_arrow(data, threads=1)] * (2 if name == "encode_warm" else 1)
    for call in calls[:-1]:
        call()
    start = time.process_time()
    calls[-1]()
    return time.process_time() - start


def child(checkout: Path, args: list[str], valgrind: list[str] = ()) -> str:
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="1")
    cmd = [*valgrind, sys.executable, __file__, "--child", *args]
    return subprocess.run(cmd, env=env, cwd=checkout, check=True, capture_output=True, text=True).stdout


def instructions(checkout: Path, name: str, corpus: Path, mb: float, scratch: Path) -> int:
    """Instructions of the measured calls under callgrind."""
    out = scratch / f"callgrind.{os.getpid()}.{name}"
    toggles = [f"--toggle-collect={t}" for t in TOGGLES[name]]
    child(checkout, [name, str(corpus), str(mb), str(scratch)],
          ["valgrind", "--tool=callgrind", "--collect-atstart=no", *toggles, f"--callgrind-out-file={out}"])
    summary = re.search(r"^summary: (\d+)", out.read_text(), re.M)
    out.unlink()
    return int(summary.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--mb", type=float, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="CPU-time runs of each build, alternating")
    ap.add_argument("--workloads", default=",".join(TOGGLES))
    ap.add_argument("--no-callgrind", action="store_true", help="CPU seconds only (no valgrind needed)")
    args = ap.parse_args()
    names = args.workloads.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        rows = {}
        for name in names:
            ir = [1, 1] if args.no_callgrind else \
                [instructions(b, name, args.corpus, args.mb, scratch) for b in (args.old, args.new)]
            cpu = [[], []]
            for _ in range(args.rounds):
                for k, b in enumerate((args.old, args.new)):
                    cpu[k].append(float(child(b, [name, str(args.corpus), str(args.mb), str(scratch)])))
            rows[name] = (ir, [min(c) for c in cpu])
    if "encode_cold" in rows and "encode_warm" in rows and not args.no_callgrind:  # the warm call alone
        rows["encode_warm"][0][:] = [b - c for b, c in zip(rows["encode_warm"][0], rows["encode_cold"][0])]
    print(f"{'workload':<14}{'old instr':>16}{'new instr':>16}{'new/old':>9}{'old CPU s':>11}{'new CPU s':>11}"
          f"{'new/old':>9}  (CPU: least of {args.rounds} runs, alternating)")
    for name, (ir, cpu) in rows.items():
        print(f"{name:<14}{ir[0]:>16,}{ir[1]:>16,}{ir[1] / ir[0]:>9.4f}{cpu[0]:>11.3f}{cpu[1]:>11.3f}"
              f"{cpu[1] / cpu[0]:>9.3f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        name, corpus, mb, scratch = sys.argv[2:6]
        print(run_workload(name, Path(corpus), float(mb), Path(scratch)))
    else:
        main()
