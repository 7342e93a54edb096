"""Normalizer and BERT benchmark, as the seed (issue 5) measures: one thread, rounds alternating
between sqltok and each peer, the median of the per-round ratios, a hash of every output.

    python bench/normalize.py [--en PATH.parquet] [--corpora PATH.jsonl ...] [--tokenizer tokenizer.json]
                              [--mb 5] [--rounds 3] [--seconds 2] [--tasks e2e bert nfc sweep] [--sweep-mb 1]

Tasks, each corpus in a fresh subprocess pinned to one CPU (RAYON_NUM_THREADS=1, SQLTOK_THREADS=1):
- e2e: bert-base-uncased end to end (ids with [CLS]/[SEP]): sqltok `encode_arrow` beside HF
  `tokenizers` `encode_batch` (no truncation, no padding) and splintr-rs `from_json(...).encode_batch`.
- bert: the BertNormalizer alone: sqltok `bert_normalize` on the Arrow column beside HF
  `BertNormalizer().normalize_str` per document.
- nfc: NFC of the corpus put in NFD first (untimed): sqltok `normalize` beside HF `NFC()`,
  `unicodedata.normalize` (Python's, Unicode 14.0) and pyarrow's `utf8_normalize` (utf8proc).
- sweep: the normalizers alone (BertNormalizer, and NFC on NFD text) on slices of 8 B .. 64 KB cut
  from the English, Russian and Chinese corpora (whole characters), --sweep-mb MB per cell; sqltok
  takes the slices as one Arrow array (as DuckDB hands it a column), HF one `normalize_str` call each.
Corpora: the first --mb MB of --en (English) and of each --corpora file (field "text"), plus the
NFD form of the Greek one. A round times sqltok, then each peer, each encoding the whole corpus over
and over for at least --seconds (the seed loops for 5 s); one untimed warm-up round first. `x` = peer time / sqltok time (median over rounds): above 1, sqltok is faster.
Hashes: sha256 of the int32 ids, or of the outputs joined by NUL; `=` marks a peer whose hash equals
sqltok's. The last line printed is one JSON object with every result.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SIZES = [8, 32, 128, 512, 2048, 8192, 32768, 65536]
SWEEP_CORPORA = ("en", "ru", "zh")


# =============================================================================================== child

def load_texts(path: str, mb: float) -> list[str]:
    """The first `mb` MB (UTF-8) of a Parquet (`text` column) or JSONL (`text` field) corpus."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        rows = pq.read_table(path, columns=["text"]).column("text").to_pylist()
    else:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line)["text"] for line in f if line.strip()]
    out, size = [], 0
    for text in rows:
        if text is None:
            continue
        out.append(text)
        size += len(text.encode())
        if size >= mb * 1e6:
            break
    return out


def sha_ids(arr) -> str:
    import numpy as np

    return hashlib.sha256(np.ascontiguousarray(arr, dtype="<i4").tobytes()).hexdigest()[:12]


def sha_texts(texts) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:12]


def runners(task: str, tokenizer: str) -> dict:
    """name -> (prepare(texts) -> input, run(input) -> output, hash(output)); sqltok first."""
    import itertools

    import pyarrow as pa
    import pyarrow.compute as pc

    import sqltok
    from sqltok.normalizers._normalize import bert_normalize_arrow, normalize_arrow

    arrow = lambda texts: pa.array(texts, pa.large_string())  # noqa: E731
    same = lambda texts: texts  # noqa: E731
    arrow_hash = lambda out: sha_texts(out.to_pylist())  # noqa: E731
    if task == "e2e":
        from tokenizers import Tokenizer as HF
        import splintr

        ours = sqltok.Tokenizer.load(tokenizer)
        hf = HF.from_file(tokenizer)
        hf.no_truncation()
        hf.no_padding()
        sp = splintr.from_json(tokenizer)     # its WordPiece backend keeps no cache
        flat = lambda lists: list(itertools.chain.from_iterable(lists))  # noqa: E731
        return {
            "sqltok": (arrow, lambda a: ours.encode_arrow(a, threads=1),
                       lambda out: sha_ids(out.flatten().to_numpy(zero_copy_only=False))),
            "hf": (same, lambda t: [e.ids for e in hf.encode_batch(t)], lambda out: sha_ids(flat(out))),
            "splintr": (same, sp.encode_batch, lambda out: sha_ids(flat(out))),
        }
    from tokenizers import normalizers

    if task == "bert":
        hf = normalizers.BertNormalizer()
        return {
            "sqltok": (arrow, lambda a: bert_normalize_arrow(a, True, True, True, True, 1), arrow_hash),
            "hf": (same, lambda t: [hf.normalize_str(x) for x in t], sha_texts),
        }
    import unicodedata

    hf = normalizers.NFC()
    return {
        "sqltok": (arrow, lambda a: normalize_arrow(a, "NFC", 1), arrow_hash),
        "hf": (same, lambda t: [hf.normalize_str(x) for x in t], sha_texts),
        "unicodedata": (same, lambda t: [unicodedata.normalize("NFC", x) for x in t], sha_texts),
        "pyarrow": (arrow, lambda a: pc.utf8_normalize(a, "NFC"), arrow_hash),
    }


def measure(run_set: dict, texts: list[str], rounds: int, seconds: float) -> dict:
    """Warm-up, then `rounds` rounds of sqltok then each peer, each encoding the corpus over and over
    for at least `seconds` (the seed's loop); MB/s (median), hash, median ratio."""
    size = sum(len(t.encode()) for t in texts) / 1e6
    inputs = {name: prep(texts) for name, (prep, _, _) in run_set.items()}
    times: dict[str, list[float]] = {name: [] for name in run_set}
    hashes = {}
    for r in range(rounds + 1):
        for name, (_, run, digest) in run_set.items():
            start, passes = time.perf_counter(), 0
            while True:
                out = run(inputs[name])
                passes += 1
                elapsed = time.perf_counter() - start
                if r == 0 or elapsed >= seconds:
                    break
            if r == 0:
                hashes[name] = digest(out)
            else:
                times[name].append(elapsed / passes)
    ours = times["sqltok"]
    return {name: {"mb_s": size / statistics.median(t), "hash": hashes[name],
                   "x": statistics.median(p / o for p, o in zip(t, ours))}
            for name, t in times.items()} | {"mb": size}


def slices(texts: list[str], size: int, total_mb: float) -> list[str]:
    """Pieces of about `size` bytes (whole characters) cut from the texts run together (cycled when
    they are shorter than `total_mb` MB), `total_mb` MB in all."""
    data = "\n".join(texts).encode()
    out, got, start = [], 0, 0
    while got < total_mb * 1e6:
        if start + size > len(data):
            start = 0
        piece = data[start:start + size].decode("utf-8", "ignore")
        out.append(piece)
        got += size
        start += size
    return out


def child(spec: dict) -> dict:
    import unicodedata2

    texts = load_texts(spec["path"], spec["mb"])
    if spec.get("nfd_corpus"):
        texts = [unicodedata2.normalize("NFD", t) for t in texts]
    if spec["task"] == "sweep":
        nfd = [unicodedata2.normalize("NFD", t) for t in texts]
        result = {}
        for task, source in (("bert", texts), ("nfc", nfd)):
            run_set = {k: v for k, v in runners(task, spec["tokenizer"]).items() if k in ("sqltok", "hf")}
            result[task] = {str(size): measure(run_set, slices(source, size, spec["sweep_mb"]), spec["rounds"],
                                               spec["seconds"])
                            for size in SIZES}
        return result
    if spec["task"] == "nfc":
        texts = [unicodedata2.normalize("NFD", t) for t in texts]
    return measure(runners(spec["task"], spec["tokenizer"]), texts, spec["rounds"], spec["seconds"])


# ============================================================================================== parent

def run_child(spec: dict) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS="1", SQLTOK_THREADS="1", OMP_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, __file__, "--child", json.dumps(spec)]
    if hasattr(os, "sched_getaffinity"):
        cmd = ["taskset", "-c", str(min(os.sched_getaffinity(0))), *cmd]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"child failed: {spec}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(title: str, rows: list[tuple[str, dict]]) -> None:
    print(f"\n## {title}")
    peers = [k for k in rows[0][1] if k not in ("sqltok", "mb")]
    print(f"{'corpus':<10} {'MB':>6} {'sqltok MB/s':>12} " + " ".join(f"{p + ' MB/s':>16} {'x':>7}" for p in peers)
          + "  hashes")
    for name, r in rows:
        same = " ".join(f"{p}{'=' if r[p]['hash'] == r['sqltok']['hash'] else '!='}" for p in peers)
        print(f"{name:<10} {r['mb']:>6.2f} {r['sqltok']['mb_s']:>12.1f} "
              + " ".join(f"{r[p]['mb_s']:>16.1f} {r[p]['x']:>7.2f}" for p in peers)
              + f"  {r['sqltok']['hash']} {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child")
    ap.add_argument("--en", default=str(SHARED / "bench" / "en100.parquet"))
    ap.add_argument("--corpora", nargs="*", default=sorted(map(str, (SHARED / "fixtures" / "corpora").glob("*.jsonl"))))
    ap.add_argument("--tokenizer", default=str(SHARED / "fixtures" / "tokenizers" / "bert-base-uncased" / "tokenizer.json"))
    ap.add_argument("--mb", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0,
                    help="each measurement repeats its corpus for at least this long (the seed: 5)")
    ap.add_argument("--tasks", nargs="*", default=["e2e", "bert", "nfc", "sweep"])
    ap.add_argument("--sweep-mb", type=float, default=1)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    corpora = {"en100": (args.en, False)} | {Path(p).stem: (p, False) for p in args.corpora}
    greek = [p for p in args.corpora if Path(p).stem == "el"]
    if greek:
        corpora["el-nfd"] = (greek[0], True)
    results: dict = {}
    base = {"tokenizer": args.tokenizer, "mb": args.mb, "rounds": args.rounds, "sweep_mb": args.sweep_mb,
            "seconds": args.seconds}
    titles = {"e2e": "bert-base-uncased end to end (ids)", "bert": "BertNormalizer alone",
              "nfc": "NFC of NFD text"}
    for task in [t for t in args.tasks if t != "sweep"]:
        rows = []
        for name, (path, nfd) in corpora.items():
            if task == "nfc" and nfd:
                continue
            rows.append((name, run_child(base | {"task": task, "path": path, "nfd_corpus": nfd})))
        results[task] = dict(rows)
        table(titles[task] + ", one thread", rows)
    if "sweep" in args.tasks:
        results["sweep"] = {}
        for name in SWEEP_CORPORA:
            if name not in corpora:
                continue
            path = corpora["en100" if name == "en" else name][0]
            sweep = run_child(base | {"task": "sweep", "path": path, "mb": max(args.mb, 2)})
            results["sweep"][name] = sweep
            for task, cells in sweep.items():
                table(f"sweep: {task} on {name} slices (corpus column = slice size in bytes)",
                      [(size, cell) for size, cell in cells.items()])
    print(json.dumps(results))


if __name__ == "__main__":
    main()
