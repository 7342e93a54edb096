"""Training side by side with the reference trainer: BPE and BoundlessBPE, the same JSONL, one run.

    python bench/train_side_by_side.py CORPUS.jsonl --reference PATH/refbpe [--vocab 131072] [--rounds 1]

The reference's Rust trainer (its `refbpe` driver, built outside this repository) and `sqltok train`
each run in a fresh process on the same file: reference BPE, reference BoundlessBPE phase 2 (it
starts from the reference BPE model, so its BoundlessBPE time is the two together), sqltok BPE and
sqltok BoundlessBPE (one run from the corpus); each run writes a new model file or database. Per
run: wall seconds, CPU seconds (user + system of the process and its threads) and peak RSS;
sqltok's seconds per stage; both ratios (reference / sqltok). On a shared machine the CPU ratio is the one to read: other work stretches wall time, not
CPU time (as long as no run has fewer cores than it can use). Both models are exported and compared
byte for byte with the reference's. Rounds go through all runs in turn; the fastest is kept.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The reference's options for the algorithm alone: no periodic verification, checkpoints or progress rows.
REFERENCE_OPTIONS = ["--recalc", "0", "--checkpoint-iterations", "0", "--progress-interval", "0"]
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    out: str


def run(cmd: list[str], cwd: Path) -> Run:
    """Run `cmd`, its wall and CPU seconds and peak RSS; an error if it fails."""
    t0 = os.times().elapsed
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = os.times().elapsed - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{out}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out)


def stages(out: str) -> str:
    """sqltok's `seconds: ...` line."""
    return next((line for line in out.splitlines() if line.startswith("seconds: ")), "").removeprefix("seconds: ")


def fresh_db(tmp: Path, model: str) -> str:
    """A database file of its own for one sqltok run, as the reference writes a new model file (a
    database that holds earlier runs' models costs their deletion and a bigger checkpoint)."""
    path = tmp / f"sq_{model}.duckdb"
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)
    return str(path)


def one_round(corpus: Path, ref: str, vocab: int, tmp: Path) -> dict[str, Run]:
    sq = [sys.executable, "-m", "sqltok.cli", "train", str(corpus), "--vocab-size", str(vocab), "--no-progress"]
    return {
        "reference bpe": run([ref, "bpe", "--input", str(corpus), "--vocab-size", str(vocab), *REFERENCE_OPTIONS,
                              "--out", str(tmp / "ref_bpe")], tmp),
        "reference boundless phase 2": run([ref, "boundless", "--input", str(corpus), "--word-model",
                                            str(tmp / "ref_bpe.model"), *REFERENCE_OPTIONS,
                                            "--out", str(tmp / "ref_bnd")], tmp),
        "sqltok bpe": run(sq + ["--model", "bpe", "--db", fresh_db(tmp, "bpe")], ROOT),
        "sqltok boundless": run(sq + ["--method", "boundless", "--model", "bnd", "--db", fresh_db(tmp, "bnd")], ROOT),
    }


def identical(tmp: Path) -> dict[str, bool]:
    """Whether sqltok's exported models equal the reference's, byte for byte."""
    same = {}
    for model, ref in (("bpe", "ref_bpe"), ("bnd", "ref_bnd")):
        path = tmp / f"sq_{model}.model"
        run([sys.executable, "-m", "sqltok.cli", "export", model, "--format", "reference", "-o", str(path),
             "--db", str(tmp / f"sq_{model}.duckdb")], ROOT)
        same[model] = filecmp.cmp(path, tmp / f"{ref}.model", shallow=False)
    return same


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, help="a JSONL file of documents (`text` key)")
    p.add_argument("--reference", required=True, help="the reference trainer's refbpe binary")
    p.add_argument("--vocab", type=int, default=131072)
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    corpus = args.corpus.resolve()
    print(f"corpus {corpus} ({corpus.stat().st_size / 1e6:,.1f} MB), vocab {args.vocab:,}, "
          f"load average {os.getloadavg()[0]:.2f} at the start")
    best: dict[str, Run] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for _ in range(args.rounds):
            for name, r in one_round(corpus, args.reference, args.vocab, tmp).items():
                if name not in best or r.wall < best[name].wall:
                    best[name] = r
        same = identical(tmp)
    print(f"{'run':30s} {'wall s':>8s} {'cpu s':>8s} {'peak MB':>8s}  stages")
    for name, r in best.items():
        print(f"{name:30s} {r.wall:8.2f} {r.cpu:8.2f} {r.rss_mb:8.0f}  {stages(r.out)}")
    ref_bpe, ref_p2 = best["reference bpe"], best["reference boundless phase 2"]
    for label, ref_wall, ref_cpu, mine, model in (
            ("BPE", ref_bpe.wall, ref_bpe.cpu, best["sqltok bpe"], "bpe"),
            ("BoundlessBPE", ref_bpe.wall + ref_p2.wall, ref_bpe.cpu + ref_p2.cpu, best["sqltok boundless"], "bnd")):
        print(f"-> {label}: sqltok {ref_wall / mine.wall:.1f}x the reference in wall time, "
              f"{ref_cpu / mine.cpu:.1f}x in CPU time; models {'IDENTICAL' if same[model] else 'DIFFER'}")


if __name__ == "__main__":
    main()
