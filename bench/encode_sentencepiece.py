"""SentencePiece-model encoding: sqltok beside `sentencepiece` (and, on the model's tokenizer.json when
one is given, HF `tokenizers` and fastokens' `encode_batch_flat`), one and two threads, in the same run.

    python bench/encode_sentencepiece.py CORPUS.parquet|.jsonl --model tokenizer.model.v1 \
        [--hf-json tokenizer.json] [--text-key text] [--mb 50] [--rounds 3] [--threads 1 2] \
        [--sizes 8 64 1024 16384 [--single-mb 0.5]]

The corpus's documents are cycled to --mb MB. Each measurement runs in a fresh subprocess (the
tokenizer loaded there, untimed; thread counts set before any library starts its pool); rounds
alternate the libraries. Printed per library and thread count: MB/s (best of --rounds), the ratio
of sqltok's MB/s to it, and whether its ids are sentencepiece's (sha256 of all ids): only conforming
peers count. The last line is one JSON object with every run.

With --sizes, single texts too (what most code does): the corpus as one stream cut into texts of
each size (`encode.single_texts`), --single-mb MB per size, each library called once per text on
one thread (sqltok `encode_ordinary`, sentencepiece `encode`, HF and fastokens `encode(...).ids`),
and sqltok's and sentencepiece's `decode` of those ids; microseconds per call, the ratio peer time /
sqltok time, and whether the ids (or decoded texts) are sentencepiece's.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIBRARIES = ("sqltok", "sentencepiece", "hf", "fastokens")
JSON_LIBRARIES = ("hf", "fastokens")  # need --hf-json


def read_docs(path: Path, key: str, mb: float) -> list[str]:
    """The corpus's texts, cycled until they hold `mb` MB."""
    import duckdb
    reader = "read_parquet" if path.suffix == ".parquet" else "read_json_auto"
    docs = [r[0] for r in duckdb.sql(f"SELECT {key} FROM {reader}(?) WHERE {key} IS NOT NULL",
                                     params=[str(path)]).fetchall()]
    out, size = [], 0
    while size < mb * 1e6 and docs:
        for d in docs:
            out.append(d)
            size += len(d.encode())
            if size >= mb * 1e6:
                break
    return out


def child(spec: dict) -> dict:
    """One measurement: load, encode every document once (timed), hash the ids."""
    docs = json.loads(Path(spec["docs"]).read_text())
    lib, threads = spec["lib"], spec["threads"]
    if lib == "sqltok":
        import pyarrow as pa
        sys.path.insert(0, str(REPO))
        import sqltok
        tok = sqltok.Tokenizer.load(spec["model"])
        arr = pa.array(docs, pa.large_string())
        tok.encode_arrow(pa.array(["warm up"]), threads=threads)
        t = time.perf_counter()
        ids = tok.encode_arrow(arr, threads=threads)
        dt = time.perf_counter() - t
        flat = ids.values.to_numpy().astype("<i4").tobytes()
    elif lib == "sentencepiece":
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=spec["model"])
        sp.encode(["warm up"])
        t = time.perf_counter()
        ids = sp.encode(docs, num_threads=threads)
        dt = time.perf_counter() - t
        flat = b"".join(int(i).to_bytes(4, "little", signed=True) for row in ids for i in row)
    elif lib == "fastokens":
        import fastokens
        tk = fastokens.Tokenizer.from_file(spec["hf_json"])
        tk.encode_batch_flat(["warm up"], add_special_tokens=False)
        t = time.perf_counter()
        flat, _offsets = tk.encode_batch_flat(docs, add_special_tokens=False)
        dt = time.perf_counter() - t
        flat = bytes(flat)
    else:
        import tokenizers
        tk = tokenizers.Tokenizer.from_file(spec["hf_json"])
        tk.encode_batch(["warm up"], add_special_tokens=False)
        t = time.perf_counter()
        enc = tk.encode_batch(docs, add_special_tokens=False)
        dt = time.perf_counter() - t
        flat = b"".join(int(i).to_bytes(4, "little", signed=True) for e in enc for i in e.ids)
    return {"seconds": dt, "sha": hashlib.sha256(flat).hexdigest(), "tokens": len(flat) // 4}


def single_calls(spec: dict):
    """(encode, decode or None) of one library for one text at a time."""
    lib = spec["lib"]
    if lib == "sqltok":
        sys.path.insert(0, str(REPO))
        import sqltok
        tok = sqltok.Tokenizer.load(spec["model"])
        return tok.encode_ordinary, tok.decode
    if lib == "sentencepiece":
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=spec["model"])
        return sp.encode, sp.decode
    if lib == "fastokens":
        import fastokens
        tk = fastokens.Tokenizer.from_file(spec["hf_json"])
    else:
        import tokenizers
        tk = tokenizers.Tokenizer.from_file(spec["hf_json"])
    return (lambda text: tk.encode(text, add_special_tokens=False).ids), None


def child_single(spec: dict) -> dict:
    """One call per text: encode (ids hashed), then decode those ids (texts hashed), both timed."""
    import pyarrow.parquet as pq
    from encode import _gc_watch

    texts = pq.read_table(spec["texts"], columns=["text"]).column("text").to_pylist()
    encode, decode = single_calls(spec)
    encode("warm up")
    with _gc_watch():
        t = time.perf_counter()
        ids = [encode(x) for x in texts]
        enc_s = time.perf_counter() - t
    out = {"calls": len(texts), "encode_seconds": enc_s,
           "sha": hashlib.sha256(b"".join(int(i).to_bytes(4, "little", signed=True) for r in ids for i in r)).hexdigest()}
    if decode is not None:
        with _gc_watch():
            t = time.perf_counter()
            back = [decode(r) for r in ids]
            out["decode_seconds"] = time.perf_counter() - t
        out["decode_sha"] = hashlib.sha256("\0".join(back).encode()).hexdigest()
    return out


def run(spec: dict) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from encode import child_env  # the thread settings of every library, and fastokens' caches off

    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=child_env(spec["threads"]),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--model", required=True, help="the SentencePiece .model (e.g. mistral-common's tokenizer.model.v1)")
    ap.add_argument("--hf-json", help="the model's tokenizer.json (transformers' converter), for HF tokenizers and fastokens")
    ap.add_argument("--text-key", default="text")
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2], help="batch runs (none: single texts only)")
    ap.add_argument("--sizes", type=int, nargs="*", default=[], help="single-text sizes in bytes (e.g. 8 64 1024 16384)")
    ap.add_argument("--single-mb", type=float, default=0.5, help="MB of single texts per size")
    args = ap.parse_args()
    docs = read_docs(args.corpus, args.text_key, args.mb)
    nbytes = sum(len(d.encode()) for d in docs)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"sqltok-bench-spm-{os.getpid()}.json"
    work.write_text(json.dumps(docs))
    libs = [lib for lib in LIBRARIES if lib not in JSON_LIBRARIES or args.hf_json]
    runs = []
    if args.sizes:
        single_report(args, docs, libs)
    if not args.threads:
        work.unlink()
        return
    try:
        for r in range(args.rounds):
            for threads in args.threads:
                for lib in libs:
                    spec = {"lib": lib, "threads": threads, "docs": str(work), "model": args.model,
                            "hf_json": args.hf_json}
                    runs.append({**spec, "round": r, **run(spec)})
                    print(f"round {r} {lib} x{threads}: {runs[-1]['seconds']:.3f} s", file=sys.stderr)
    finally:
        work.unlink()
    print(f"{len(docs):,} documents, {nbytes / 1e6:.1f} MB, model {args.model}")
    reference = {t: next(x["sha"] for x in runs if x["lib"] == "sentencepiece" and x["threads"] == t)
                 for t in args.threads}
    print(f"{'library':<16}{'threads':>8}{'MB/s':>10}{'sqltok/x':>10}  ids")
    for threads in args.threads:
        best = {lib: min(x["seconds"] for x in runs if x["lib"] == lib and x["threads"] == threads) for lib in libs}
        for lib in libs:
            sha = next(x["sha"] for x in runs if x["lib"] == lib and x["threads"] == threads)
            print(f"{lib:<16}{threads:>8}{nbytes / 1e6 / best[lib]:>10.1f}{best[lib] / best['sqltok']:>10.2f}  "
                  f"{'= sentencepiece' if sha == reference[threads] else 'DIFFERENT'}")
    print(json.dumps({"documents": len(docs), "bytes": nbytes, "runs": runs}))


def single_report(args, docs: list[str], libs: list[str]) -> None:
    """The single-text table: per size, each library's best microseconds per call over the rounds."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from encode import single_texts

    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    print(f"{'size':>7} {'library':<16}{'us/call':>10}{'peer/sqltok':>12}  ids   {'decode us':>10}{'peer/sqltok':>12}")
    for size in args.sizes:
        cut = single_texts("corpus", docs, size, args.single_mb, tmp / f"sqltok-bench-spm-single-{os.getpid()}.parquet")
        got = {lib: [] for lib in libs}
        try:
            for _ in range(args.rounds):  # rounds alternate the libraries
                for lib in libs:
                    got[lib].append(run({"lib": lib, "threads": 1, "texts": cut["path"], "model": args.model,
                                         "hf_json": args.hf_json, "single": True}))
        finally:
            Path(cut["path"]).unlink()
        best = {lib: {**runs[0], "encode_seconds": min(r["encode_seconds"] for r in runs),
                      "decode_seconds": min(r.get("decode_seconds", 1e9) for r in runs)} for lib, runs in got.items()}
        us = {lib: 1e6 * b["encode_seconds"] / b["calls"] for lib, b in best.items()}
        dec = {lib: 1e6 * b["decode_seconds"] / b["calls"] for lib, b in best.items() if b["decode_seconds"] < 1e9}
        for lib in libs:
            same = "=" if best[lib]["sha"] == best["sentencepiece"]["sha"] else "DIFF"
            d = f"{dec[lib]:>10.2f}{dec[lib] / dec['sqltok']:>12.2f}  " + \
                ("=" if best[lib]["decode_sha"] == best["sentencepiece"]["decode_sha"] else "DIFF") if lib in dec else ""
            print(f"{size:>7} {lib:<16}{us[lib]:>10.2f}{us[lib] / us['sqltok']:>12.2f}  {same:<5} {d}")
        print(json.dumps({"size": size, "texts": cut["texts"], "best": best}), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        spec = json.loads(sys.argv[2])
        print(json.dumps(child_single(spec) if spec.get("single") else child(spec)))
    else:
        main()
