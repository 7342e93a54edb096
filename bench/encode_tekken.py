"""Tekken encoding (Mistral's `tekken_*.json`): sqltok beside mistral-common's own `Tekkenizer` and the
peers that take its ranks (tiktoken, fastokens, splintr-rs, riptoken), one thread, in the same run.

    python bench/encode_tekken.py CORPUS.parquet|.jsonl [--tekken tekken_240911.json] [--text-key text]
        [--mb 20] [--rounds 3] [--sizes 64 1024 16384] [--single-mb 0.5]

The peers get what `Tekkenizer` hands tiktoken: the file's first default_vocab_size -
default_num_special_tokens ranks as a `.tiktoken` file and its pattern; their ids are those ranks, to
which `Tekkenizer` adds the number of special tokens (untimed here, in the hash only). sqltok loads
the Tekken file itself. Each measurement is a fresh subprocess (tokenizer loaded untimed, one warm-up
call, no cache has seen the documents; `encode.child_env`'s thread settings); rounds alternate the
libraries. Batch: every document in one call where the library has one (sqltok `encode_arrow`,
fastokens and splintr `encode_batch_flat`, riptoken `encode_ordinary_batch`), else one call per
document (mistral-common `encode`, tiktoken `encode_ordinary`: its batch call is a thread pool).
Single texts: the corpus as one stream cut into texts of each --sizes (`encode.single_texts`), one
`encode_ordinary` call per text (mistral-common: `encode(text, bos=False, eos=False)`). Printed: MB/s
or microseconds per call (best of --rounds), the ratio peer time / sqltok time, and whether the ids
equal mistral-common's (sha256 of all ids); the last line is one JSON object with every run.
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

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LIBRARIES = ("sqltok", "mistral-common", "tiktoken", "fastokens", "splintr", "riptoken")


def default_tekken() -> Path | None:
    try:
        import mistral_common
    except ImportError:
        return None
    return Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"


def write_ranks(tekken: Path, out: Path) -> dict:
    """The ranks `Tekkenizer` gives tiktoken, as a `.tiktoken` file; the pattern and the id offset."""
    data = json.loads(tekken.read_text(encoding="utf-8"))
    config = data["config"]
    special = config["default_num_special_tokens"]
    keep = config["default_vocab_size"] - special
    with out.open("w", encoding="ascii") as f:
        for entry in data["vocab"][:keep]:
            f.write(f"{entry['token_bytes']} {entry['rank']}\n")
    return {"ranks": str(out), "pattern": config["pattern"], "offset": special}


def encoder(spec: dict):
    """(one text -> ids, all texts -> their result, that result -> all ids flat) of one library."""
    from encode import _flat_arrow, _flat_bytes, _flat_lists

    lib, ranks, pattern = spec["lib"], spec["ranks"], spec["pattern"]
    if lib == "sqltok":
        import pyarrow as pa
        sys.path.insert(0, str(REPO))
        import sqltok
        tok = sqltok.Tokenizer.load(spec["tekken"])
        return tok.encode_ordinary, lambda texts: tok.encode_arrow(pa.array(texts, pa.large_string()), threads=1), \
            _flat_arrow
    if lib == "mistral-common":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
        tk = Tekkenizer.from_file(spec["tekken"])
        one = lambda text: tk.encode(text, bos=False, eos=False)
        return one, lambda texts: [one(t) for t in texts], _flat_lists
    if lib == "tiktoken":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        enc = tiktoken.Encoding("tekken", pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(ranks), special_tokens={})
        return enc.encode_ordinary, lambda texts: [enc.encode_ordinary(t) for t in texts], _flat_lists
    if lib == "fastokens":
        import fastokens
        fk = fastokens.Tokenizer.from_tiktoken(ranks, pattern=pattern, special_tokens={})
        flat = lambda texts: (fk.encode_batch_flat(texts, add_special_tokens=False, split_special_tokens=True), len(texts))
        return (lambda text: fk.encode_ordinary(text).ids), flat, lambda out: _flat_bytes(*out[0], out[1])
    if lib == "splintr":
        import splintr
        sk = splintr.Tokenizer(ranks, pattern, {})
        return sk.encode_ordinary, lambda texts: (sk.encode_batch_flat(texts), len(texts)), \
            lambda out: _flat_bytes(*out[0], out[1])
    import riptoken
    rk = riptoken.CoreBPE(riptoken.load_tiktoken_bpe(ranks), {}, pattern)
    return rk.encode_ordinary, rk.encode_ordinary_batch, _flat_lists


def child(spec: dict) -> dict:
    """One measurement in this fresh process: load (untimed), warm up on one sentence, time the calls,
    then hash the ids (the peers' ranks moved by the offset `Tekkenizer` adds)."""
    import pyarrow.parquet as pq
    from encode import _flat_lists, _gc_watch

    texts = pq.read_table(spec["texts"], columns=["text"]).column("text").to_pylist()
    one, batch, flatten = encoder(spec)
    one("A first call on one short sentence that is not from the corpus.")
    with _gc_watch():
        t = time.perf_counter()
        out = [one(x) for x in texts] if spec["single"] else batch(texts)
        seconds = time.perf_counter() - t
    ids = (_flat_lists(out) if spec["single"] else flatten(out)).astype(np.int64)
    if spec["lib"] not in ("sqltok", "mistral-common"):
        ids = ids + spec["offset"]
    return {"seconds": seconds, "calls": len(texts), "sha": hashlib.sha256(ids.astype("<i4").tobytes()).hexdigest()}


def run(spec: dict) -> dict:
    sys.path.insert(0, str(HERE))
    from encode import child_env  # the thread settings of every library, and fastokens' caches off

    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=child_env(1),
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(label: str, texts_path: str, nbytes: int, single: bool, base: dict, rounds: int) -> dict:
    """Every library on one set of texts, rounds alternating them; printed as one table."""
    got = {lib: [] for lib in LIBRARIES}
    for _ in range(rounds):
        for lib in LIBRARIES:
            got[lib].append(run({**base, "lib": lib, "texts": texts_path, "single": single}))
    best = {}
    for lib, runs in got.items():
        ok = [r for r in runs if "error" not in r]
        best[lib] = min(ok, key=lambda r: r["seconds"]) if ok else runs[0]
    ref, mine = best["mistral-common"].get("sha"), best["sqltok"]["seconds"]
    unit = "us/call" if single else "MB/s"
    print(f"\n-- {label}\n  {'library':<16}{unit:>10}{'peer/sqltok':>13}  ids")
    for lib, b in best.items():
        if "error" in b:
            print(f"  {lib:<16}  failed: {b['error']}")
            continue
        value = 1e6 * b["seconds"] / b["calls"] if single else nbytes / 1e6 / b["seconds"]
        same = "= mistral-common" if b["sha"] == ref else "DIFFERENT"
        print(f"  {lib:<16}{value:>10.2f}{b['seconds'] / mine:>13.2f}  {same}")
    return {"label": label, "bytes": nbytes, "single": single, "runs": got}


def main() -> None:
    sys.path.insert(0, str(HERE))
    from encode import single_texts
    from encode_sentencepiece import read_docs

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--tekken", type=Path, default=default_tekken(), help="a tekken_*.json (default: mistral-common's "
                    "tekken_240911.json)")
    ap.add_argument("--text-key", default="text")
    ap.add_argument("--mb", type=float, default=20, help="MB of documents for the batch runs (0: none)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="*", default=[64, 1024, 16384], help="single-text sizes in bytes")
    ap.add_argument("--single-mb", type=float, default=0.5, help="MB of single texts per size")
    args = ap.parse_args()
    if args.tekken is None or not args.tekken.is_file():
        raise SystemExit("give --tekken (mistral-common is not installed)")
    import pyarrow as pa
    import pyarrow.parquet as pq

    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"sqltok-bench-tekken-{os.getpid()}"
    work.mkdir()
    results = []
    try:
        base = {"tekken": str(args.tekken), **write_ranks(args.tekken, work / "tekken.tiktoken")}
        docs = read_docs(args.corpus, args.text_key, max(args.mb, args.single_mb))
        print(f"# {args.tekken.name} on {args.corpus}; one thread; best of {args.rounds} round(s), each a fresh process")
        if args.mb > 0:
            batch = read_docs(args.corpus, args.text_key, args.mb)
            path = work / "batch.parquet"
            pq.write_table(pa.table({"text": pa.array(batch, pa.string())}), path)
            nbytes = sum(len(d.encode()) for d in batch)
            results.append(measure(f"batch: {len(batch):,} documents, {nbytes / 1e6:.1f} MB", str(path), nbytes, False,
                                   base, args.rounds))
        for size in args.sizes:
            cut = single_texts("corpus", docs, size, args.single_mb, work / f"single-{size}.parquet")
            results.append(measure(f"single texts of {size} B: {cut['texts']:,} calls", cut["path"], cut["bytes"], True,
                                   base, args.rounds))
    finally:
        for f in work.iterdir():
            f.unlink()
        work.rmdir()
    print(json.dumps(results))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, str(HERE))
        print(json.dumps(child(json.loads(sys.argv[2]))))
    else:
        main()
