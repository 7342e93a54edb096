"""Encoding benchmark: sqltok's encoder beside tiktoken, HF tokenizers, fastokens, splintr-rs and riptoken.

    python bench/encode.py [--en PATH.parquet] [--code PATH] [--multi PATH ...] [--mb 50] [--rounds 3]
                           [--threads 1 2] [--tokenizers o200k cl100k trained bert llama3 qwen3]
                           [--sqltok-model NAME --db FILE] [--duckdb-corpora en]

Three corpora of at least --mb MB each (English, code, a multilingual mix; a corpus smaller than that
has its documents cycled, and the output says so), the tokenizers of --tokenizers (o200k_base and
cl100k_base from their `.tiktoken` and `tokenizer.json` files; a model trained by sqltok, vocab 32,768,
simple pre-tokenization, unless --sqltok-model/--db name one), Llama 3's and Qwen 3's tokenizer.json
(on request; no `.tiktoken`, so HF is their reference and sqltok loads the same file), every library
at every thread count. Each measurement is a fresh
subprocess (cold: the tokenizer is loaded there, untimed, and no cache has seen the documents; thread
pools cannot leak between runs). Runs with fewer threads than CPUs are also pinned to that many CPUs.

Per library: MB/s and tokens/s (best of --rounds), CPU time / wall time, and sha256 over all ids
(int32 little-endian, document order). A peer is "conforming" when its hash equals the reference's:
tiktoken's for tokenizers loaded from the `.tiktoken` ranks, HF tokenizers' for those loaded from
`tokenizer.json`. Only conforming peers count for the verdict "sqltok is faster than every
conforming peer". Then the same work inside DuckDB: `UPDATE docs SET ids = encode('o200k', text)`
beside each peer doing fetch -> encode -> write back through Arrow into a new table.

Single-text mode (`--modes single`): what most code does, one call per text. Each corpus is read as
one stream cut into texts of each `--sizes` (default 8 B, 64 B, 1 KB, 16 KB, 256 KB; cuts fall on
character boundaries), `--single-mb` MB per size; every library encodes them one call at a time with
its single-text API (sqltok and tiktoken `encode_ordinary`, fastokens and splintr `encode_ordinary`,
HF `encode(...).ids`, riptoken `encode_ordinary`), one thread, fresh process; sqltok's and tiktoken's
`decode` of the same texts' ids; and bert-base-uncased `encode` beside HF's (padding and truncation
off). Reported: microseconds per call, MB/s, the ratio peer time / sqltok time, and a verdict per
size against the fastest conforming peer (ids hashed per library as above; decode conforms when it
gives the texts back). Python's garbage collector stays on in the timed calls (the result lists are
kept, as a caller keeps them), but each run collects and freezes what its process held first
(`gc.freeze`), so that a full collection walks the same result lists for every library rather than
its import graph (sqltok's holds pyarrow, numpy and duckdb); below a table, the time each library's
process spent in the collector and how many full collections ran.

The last line printed is one JSON object with every run.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import itertools
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"

O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
CL100K_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                  "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
# Encoded once, untimed, before the timed call (unless --no-warmup): one-time initialization that a
# library defers to its first call is not encoding time, and no cache sees the timed documents.
WARMUP_TEXT = "A first call on one short sentence that is not from the corpus."
CORPUS_NAMES = {"en": "English", "code": "code", "multi": "multilingual mix"}

# Variants: how each library is called. `src` says which file the tokenizer comes from, which decides
# the reference a variant's ids are compared with ("tiktoken": the ranks, "json": tokenizer.json).
VARIANTS = {
    "sqltok-list": ("sqltok encode_ordinary_batch", "tiktoken"),
    "sqltok-arrow": ("sqltok encode_arrow", "tiktoken"),
    "tiktoken": ("tiktoken", "tiktoken"),
    "hf": ("HF tokenizers", "json"),
    "fastokens-tt": ("fastokens (.tiktoken)", "tiktoken"),
    "fastokens-json": ("fastokens (tokenizer.json)", "json"),
    "fastokens-flat": ("fastokens flat (.tiktoken)", "tiktoken"),
    "fastokens-flat-json": ("fastokens flat (tokenizer.json)", "json"),
    "splintr-tt": ("splintr (.tiktoken)", "tiktoken"),
    "splintr-json": ("splintr (tokenizer.json)", "json"),
    "splintr-flat": ("splintr flat (.tiktoken)", "tiktoken"),
    "riptoken": ("riptoken", "tiktoken"),
}
SQLTOK_VARIANTS = ("sqltok-list", "sqltok-arrow")
#: A tokenizer with `.tiktoken` ranks runs every variant (one without a tokenizer.json, those that
#: do not read one); a tokenizer.json alone (Llama 3, Qwen 3): sqltok and the peers that read it.
JSON_VARIANTS = tuple(v for v, (_, src) in VARIANTS.items() if v in SQLTOK_VARIANTS or src == "json")
JSON_SINGLE = ("sqltok", "hf", "fastokens-json", "sqltok-decode")
DUCKDB_VARIANTS = {
    "sqltok-sql": "sqltok UPDATE ... encode() in SQL",
    "sqltok-py": "sqltok encode_arrow, Arrow round trip",
    "tiktoken": "tiktoken",
    "hf": "HF tokenizers",
    "fastokens-tt": "fastokens (.tiktoken)",
    "fastokens-flat": "fastokens flat (.tiktoken)",
    "splintr-tt": "splintr (.tiktoken)",
    "splintr-flat": "splintr flat (.tiktoken)",
    "riptoken": "riptoken",
}


#: Single-text mode: each library's call for one text (src as above; "decode": must give the text back).
SIZES = (8, 64, 1024, 16384, 262144)
SINGLE_VARIANTS = {
    "sqltok": ("sqltok encode_ordinary", "tiktoken"),
    "tiktoken": ("tiktoken encode_ordinary", "tiktoken"),
    "hf": ("HF encode().ids", "json"),
    "fastokens-tt": ("fastokens encode_ordinary (.tiktoken)", "tiktoken"),
    "fastokens-json": ("fastokens encode_ordinary (tokenizer.json)", "json"),
    "splintr-tt": ("splintr encode_ordinary (.tiktoken)", "tiktoken"),
    "riptoken": ("riptoken encode_ordinary", "tiktoken"),
    "sqltok-decode": ("sqltok decode", "decode"),
    "tiktoken-decode": ("tiktoken decode", "decode"),
}
SINGLE_SQLTOK = ("sqltok", "sqltok-decode", "sqltok-wp")
#: WordPiece (bert-base-uncased tokenizer.json), single texts: sqltok `encode` beside HF's.
WORDPIECE_VARIANTS = {"sqltok-wp": ("sqltok encode (bert)", "hf-wp"), "hf-wp": ("HF encode().ids (bert)", "hf-wp")}


# =============================================================================================== child
# Everything below `child_*` runs in a fresh subprocess: one library, one thread count, one round.

def _sha(ids) -> str:
    import numpy as np

    return hashlib.sha256(np.ascontiguousarray(ids, dtype="<i4").tobytes()).hexdigest()


def _flat_lists(lists):
    import numpy as np

    n = sum(map(len, lists))
    return np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=n)


def _flat_arrow(arr):
    return arr.flatten().to_numpy(zero_copy_only=False)


def _flat_bytes(ids: bytes, offsets: bytes, docs: int):
    import numpy as np

    offs = np.frombuffer(offsets, dtype="<u8")
    if len(offs) != docs + 1:
        raise RuntimeError(f"flat output has {len(offs) - 1} documents, expected {docs}")
    return np.frombuffer(ids, dtype="<u4")


def _fastokens_json(path: str):
    """fastokens 0.3.5 refuses a BPE vocabulary whose ids are not 0..n-1; o200k's tokenizer.json lists
    <|endoftext|> (199999) and <|endofprompt|> (200018) in `model.vocab` as well as in `added_tokens`.
    They are removed from `model.vocab` only (they stay added tokens); the ordinary vocabulary is
    unchanged."""
    import fastokens

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    vocab = data["model"]["vocab"]
    if sorted(vocab.values()) != list(range(len(vocab))):
        for added in data.get("added_tokens", []):
            if vocab.get(added["content"]) == added["id"]:
                del vocab[added["content"]]
    return fastokens.Tokenizer.from_json_str(json.dumps(data))


def load_encoder(variant: str, tok: dict, threads: int):
    """Build the tokenizer for `variant` (untimed) and return `run(texts, arrow) -> ids` where ids is
    ("lists", list[list[int]]), ("arrow", pa.Array) or ("flat", (ids, offsets))."""
    tt, js, pattern, special = tok["tiktoken"], tok.get("json"), tok["pattern"], tok["special"]
    if variant in SQLTOK_VARIANTS:
        import sqltok

        enc = sqltok.Tokenizer.load(tok["sqltok"])
        if variant == "sqltok-list":
            return lambda texts, arr: ("lists", enc.encode_ordinary_batch(texts, num_threads=threads))
        return lambda texts, arr: ("arrow", enc.encode_arrow(arr, threads=threads))
    if variant == "tiktoken":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        enc = tiktoken.Encoding(tok["name"], pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(tt),
                                special_tokens=special)
        if threads == 1:
            return lambda texts, arr: ("lists", [enc.encode_ordinary(t) for t in texts])
        return lambda texts, arr: ("lists", enc.encode_ordinary_batch(texts, num_threads=threads))
    if variant == "hf":
        from tokenizers import Tokenizer as HFTokenizer

        enc = HFTokenizer.from_file(js)
        enc.encode_special_tokens = True  # special-token text as text, as every encode_ordinary here
        return lambda texts, arr: ("lists", [e.ids for e in enc.encode_batch(texts, add_special_tokens=False)])
    if variant.startswith("fastokens"):
        import fastokens

        if variant in ("fastokens-json", "fastokens-flat-json"):
            enc = _fastokens_json(js)
        else:
            enc = fastokens.Tokenizer.from_tiktoken(tt, pattern=pattern, special_tokens=special)
        if variant in ("fastokens-flat", "fastokens-flat-json"):
            return lambda texts, arr: ("flat", enc.encode_batch_flat(texts, add_special_tokens=False,
                                                                     split_special_tokens=True))
        return lambda texts, arr: ("lists", [e.ids for e in enc.encode_batch(
            texts, add_special_tokens=False, split_special_tokens=True)])
    if variant.startswith("splintr"):
        import splintr

        enc = splintr.from_json(js) if variant == "splintr-json" else splintr.Tokenizer(tt, pattern, special)
        if variant == "splintr-flat":
            return lambda texts, arr: ("flat", enc.encode_batch_flat(texts))
        return lambda texts, arr: ("lists", enc.encode_batch(texts))
    if variant == "riptoken":
        import riptoken

        enc = riptoken.CoreBPE(riptoken.load_tiktoken_bpe(tt), special, pattern)
        return lambda texts, arr: ("lists", enc.encode_ordinary_batch(texts))
    raise SystemExit(f"unknown variant {variant!r}")


def load_single(variant: str, tok: dict):
    """Build the tokenizer for a single-text `variant` (untimed): (encode one text -> ids, decode ids
    -> text or None)."""
    tt, js, pattern, special = tok["tiktoken"], tok.get("json"), tok["pattern"], tok["special"]
    if variant in ("sqltok", "sqltok-decode", "sqltok-wp"):
        import sqltok

        enc = sqltok.Tokenizer.load(tok["sqltok"])
        if variant == "sqltok-wp":  # HF's encode matches special-token text ("[CLS]") in the text
            return (lambda t: enc.encode(t, allowed_special="all")), enc.decode
        return enc.encode_ordinary, enc.decode
    if variant.startswith("tiktoken"):
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        enc = tiktoken.Encoding(tok["name"], pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(tt),
                                special_tokens=special)
        return enc.encode_ordinary, enc.decode
    if variant in ("hf", "hf-wp"):
        from tokenizers import Tokenizer as HFTokenizer

        enc = HFTokenizer.from_file(js)
        enc.no_padding()
        enc.no_truncation()
        add = variant == "hf-wp"
        enc.encode_special_tokens = not add  # encode_ordinary's peer: special-token text as text
        return (lambda t: enc.encode(t, add_special_tokens=add).ids), None
    if variant.startswith("fastokens"):
        import fastokens

        enc = _fastokens_json(js) if variant == "fastokens-json" else \
            fastokens.Tokenizer.from_tiktoken(tt, pattern=pattern, special_tokens=special)
        return (lambda t: enc.encode_ordinary(t).ids), None
    if variant == "splintr-tt":
        import splintr

        enc = splintr.Tokenizer(tt, pattern, special)
        return enc.encode_ordinary, None
    if variant == "riptoken":
        import riptoken

        enc = riptoken.CoreBPE(riptoken.load_tiktoken_bpe(tt), special, pattern)
        return enc.encode_ordinary, None
    raise SystemExit(f"unknown single-text variant {variant!r}")


def child_single(spec: dict) -> dict:
    """One call per text of the corpus file: encode (ids hashed), or decode the texts' ids (encoded
    first, untimed, by the same library; the texts hashed)."""
    import pyarrow.parquet as pq

    texts = pq.read_table(spec["corpus"], columns=["text"]).column("text").to_pylist()
    t0 = time.perf_counter()
    encode, decode = load_single(spec["variant"], spec["tok"])
    load_s = time.perf_counter() - t0
    warm_s = _warm_up(lambda: decode(encode(WARMUP_TEXT)) if decode else encode(WARMUP_TEXT)) \
        if spec["warmup"] else None
    if spec["variant"].endswith("-decode"):
        ids = [encode(t) for t in texts]
        with _gc_watch() as gcw:
            c0, t0 = _cpu(), time.perf_counter()
            out = [decode(i) for i in ids]
            secs, cpu = time.perf_counter() - t0, _cpu() - c0
        return {"seconds": secs, "cpu": cpu, "load_seconds": load_s, "warmup_seconds": warm_s, "calls": len(texts),
                "tokens": sum(map(len, ids)), "sha256": hashlib.sha256("\0".join(out).encode()).hexdigest(), **gcw}
    with _gc_watch() as gcw:
        c0, t0 = _cpu(), time.perf_counter()
        out = [encode(t) for t in texts]
        secs, cpu = time.perf_counter() - t0, _cpu() - c0
    ids = _flat_lists(out)
    return {"seconds": secs, "cpu": cpu, "load_seconds": load_s, "warmup_seconds": warm_s, "calls": len(texts),
            "tokens": int(len(ids)), "sha256": _sha(ids), **gcw}


@contextlib.contextmanager
def _gc_watch():
    """The timed block of a single-text run, fair about Python's garbage collector: it stays on (the
    result lists a caller keeps make it run, as in real use), but what the process held before the
    block is collected and frozen first (`gc.freeze`, as servers do after imports), so a full
    collection walks what the block made, the same lists for every library, and not the import
    graph of the library (sqltok's pulls in pyarrow, numpy and duckdb; HF's or fastokens' far
    less). Yields the time spent collecting and how many full (generation 2) collections ran."""
    seen = {"gc_seconds": 0.0, "gc_full": 0}
    gc.collect()
    gc.freeze()
    start = [0.0]

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            start[0] = time.perf_counter()
            return
        seen["gc_seconds"] += time.perf_counter() - start[0]
        seen["gc_full"] += info["generation"] == 2

    gc.callbacks.append(watch)
    try:
        yield seen
    finally:
        gc.callbacks.remove(watch)
        gc.unfreeze()


def _flatten(kind: str, out, docs: int):
    if kind == "lists":
        if len(out) != docs:
            raise RuntimeError(f"{len(out)} results for {docs} documents")
        return _flat_lists(out)
    if kind == "arrow":
        return _flat_arrow(out)
    return _flat_bytes(*out, docs)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_encode(spec: dict) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arr = pq.read_table(spec["corpus"], columns=["text"]).column("text").combine_chunks()
    texts = arr.to_pylist()
    t0 = time.perf_counter()
    run = load_encoder(spec["variant"], spec["tok"], spec["threads"])
    load_s = time.perf_counter() - t0
    warm_s = _warm_up(lambda: run([WARMUP_TEXT], pa.array([WARMUP_TEXT]))) if spec["warmup"] else None
    c0, t0 = _cpu(), time.perf_counter()
    kind, out = run(texts, arr)
    secs, cpu = time.perf_counter() - t0, _cpu() - c0
    ids = _flatten(kind, out, len(texts))
    return {"seconds": secs, "cpu": cpu, "load_seconds": load_s, "warmup_seconds": warm_s,
            "tokens": int(len(ids)), "sha256": _sha(ids)}


def _warm_up(call) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def child_duckdb(spec: dict) -> dict:
    """Encode a DuckDB table: in SQL (sqltok) or fetch -> encode -> Arrow -> new table (peers)."""
    import duckdb
    import pyarrow as pa

    variant, k = spec["variant"], spec["threads"]
    con = duckdb.connect()
    con.execute(f"SET threads = {k}")
    corpus = spec["corpus"].replace("'", "''")
    con.execute(f"CREATE TABLE docs AS SELECT text FROM read_parquet('{corpus}')")
    t0 = time.perf_counter()
    if variant == "sqltok-sql":
        import sqltok

        sqltok.register(con)
        con.execute("ALTER TABLE docs ADD COLUMN ids INTEGER[]")
        con.execute("SELECT sqltok_load('o200k', ?)", [spec["tok"]["sqltok"]]).fetchall()
        load_s = time.perf_counter() - t0
        warm_s = _warm_up(lambda: con.execute("SELECT encode('o200k', ?)", [WARMUP_TEXT]).fetchall()) \
            if spec["warmup"] else None
        c0, t0 = _cpu(), time.perf_counter()
        con.execute("UPDATE docs SET ids = encode('o200k', text)")
        secs, cpu = time.perf_counter() - t0, _cpu() - c0
        result = "SELECT ids FROM docs ORDER BY rowid"
    else:
        run = load_encoder("sqltok-arrow" if variant == "sqltok-py" else variant, spec["tok"], k)
        load_s = time.perf_counter() - t0
        warm_s = _warm_up(lambda: run([WARMUP_TEXT], pa.array([WARMUP_TEXT]))) if spec["warmup"] else None
        c0, t0 = _cpu(), time.perf_counter()
        text = con.sql("SELECT text FROM docs").to_arrow_table().column("text").combine_chunks()
        texts = None if variant == "sqltok-py" else text.to_pylist()
        kind, out = run(texts, text)
        if kind == "lists":
            ids = pa.array(out, pa.list_(pa.int32()))
        elif kind == "flat":
            import numpy as np

            values = pa.array(np.frombuffer(out[0], dtype="<u4").view("<i4"))
            ids = pa.LargeListArray.from_arrays(pa.array(np.frombuffer(out[1], dtype="<u8").view("<i8")), values)
        else:
            ids = out
        encoded = pa.table({"text": text, "ids": ids})
        con.register("encoded", encoded)
        con.execute("CREATE TABLE docs_ids AS SELECT text, ids FROM encoded")
        con.unregister("encoded")
        secs, cpu = time.perf_counter() - t0, _cpu() - c0
        result = "SELECT ids FROM docs_ids"
    col = con.sql(result).to_arrow_table().column("ids").combine_chunks()
    ids = _flat_arrow(col)
    return {"seconds": secs, "cpu": cpu, "load_seconds": load_s, "warmup_seconds": warm_s,
            "tokens": int(len(ids)), "sha256": _sha(ids)}


def child_main(spec_json: str) -> None:
    spec = json.loads(spec_json)
    cpus = sorted(os.sched_getaffinity(0))
    if spec["threads"] < len(cpus):  # enforce the thread count even for libraries that ignore it
        os.sched_setaffinity(0, cpus[:spec["threads"]])
    fn = {"duckdb": child_duckdb, "single": child_single}.get(spec["mode"], child_encode)
    load_avg = os.getloadavg()[0]  # how busy the shared machine was when this run started
    print(json.dumps({**fn(spec), "load_avg": load_avg}))


# ============================================================================================== parent

def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def read_docs(path: Path, text_key: str) -> list[str]:
    """The documents of a Parquet or JSON-lines file, in file order (NULLs dropped)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return [t for t in pq.read_table(path, columns=[text_key]).column(text_key).to_pylist() if t is not None]
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                t = json.loads(line).get(text_key)
                if t is not None:
                    docs.append(t)
    return docs


def multi_files(paths: list[Path]) -> list[Path]:
    """Files of the multilingual mix: each path is a file, or a folder whose *.jsonl files count
    except en.jsonl and code.jsonl."""
    out = []
    for p in paths:
        if p.is_dir():
            out += sorted(f for f in p.glob("*.jsonl") if f.stem not in ("en", "code"))
        else:
            out.append(p)
    return out


def build_corpus(name: str, base: list[str], sources: list[str], mb: float, out: Path) -> dict:
    """Take documents from `base` until at least `mb` MB, cycling through it again when it is smaller,
    and write them to `out` (Parquet, column text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = int(mb * 1e6)
    sizes = [len(t.encode("utf-8")) for t in base]
    base_bytes = sum(sizes)
    if base_bytes == 0:
        raise SystemExit(f"corpus {name}: no text in {', '.join(sources)}")
    docs, total = [], 0
    for text, size in itertools.cycle(zip(base, sizes)):
        if total >= target:
            break
        docs.append(text)
        total += size
    pq.write_table(pa.table({"text": pa.array(docs, pa.string())}), out, row_group_size=8192, compression="zstd")
    cycled = total > base_bytes
    return {"name": name, "label": CORPUS_NAMES[name], "sources": sources, "path": str(out), "docs": len(docs),
            "bytes": total, "base_docs": len(base), "base_bytes": base_bytes, "cycled": cycled,
            "passes": round(total / base_bytes, 2)}


def single_texts(name: str, base: list[str], size: int, mb: float, out: Path) -> dict:
    """The documents of `base` as one stream (joined by blank lines) cut into texts of about `size`
    bytes (each cut moved back to a character boundary) until `mb` MB, cycling when the stream is
    shorter; written to `out` (Parquet, column text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stream = "\n\n".join(base).encode("utf-8")
    target, texts, total, at, passes = max(int(mb * 1e6), 4 * size), [], 0, 0, 1
    while total < target:
        if at >= len(stream):
            at, passes = 0, passes + 1
        end = min(at + size, len(stream))
        while end < len(stream) and end > at + 1 and (stream[end] & 0xC0) == 0x80:
            end -= 1
        texts.append(stream[at:end].decode("utf-8"))
        total += end - at
        at = end
    pq.write_table(pa.table({"text": pa.array(texts, pa.string())}), out, compression="zstd")
    return {"name": name, "size": size, "path": str(out), "texts": len(texts), "bytes": total, "passes": passes,
            "sha256": hashlib.sha256("\0".join(texts).encode()).hexdigest()}


def single_tables(corpora: dict, singles: dict, sruns: dict, toks: dict, sizes: list[int]) -> tuple[list, list]:
    """Per corpus and tokenizer: microseconds per call at each size, the ratio peer time / sqltok time,
    and whether sqltok is faster than every conforming peer at each size."""
    lines, verdicts = [], []
    for c, corpus in corpora.items():
        for tkey, t in toks.items():
            variants = t["single"]
            if not variants:
                continue
            labels = {**{v: SINGLE_VARIANTS[v][0] for v in SINGLE_VARIANTS}, **{v: l for v, (l, _) in
                                                                                 WORDPIECE_VARIANTS.items()}}
            cells = {}
            for v in variants:
                for size in sizes:
                    cell = singles[(c, size)]
                    s = summarize(sruns.get((c, tkey, v, size), []), cell["bytes"])
                    if "error" not in s:
                        s["us_call"] = 1e6 * s["seconds"] / cell["texts"]
                    cells[(v, size)] = s
            refs = {}
            for size in sizes:
                src_of = {**{v: src for v, (_, src) in SINGLE_VARIANTS.items()},
                          **{v: src for v, (_, src) in WORDPIECE_VARIANTS.items()},
                          "sqltok": t.get("sqltok_src", "tiktoken")}
                for ref in ("tiktoken", "hf", "hf-wp"):
                    s = cells.get((ref, size))
                    if s and "error" not in s and s["stable"]:
                        refs[(ref, size)] = s["sha256"]
                for v in variants:
                    s = cells[(v, size)]
                    if "error" in s:
                        s["conforming"] = None
                        continue
                    src = src_of[v]
                    ref = singles[(c, size)]["sha256"] if src == "decode" else \
                        refs.get(({"json": "hf"}.get(src, src), size))
                    s["conforming"] = None if ref is None else s["sha256"] == ref and s["stable"]
            lines += ["", f"-- single texts, {t['label']}, {CORPUS_NAMES[c]}: microseconds per call (MB/s) "
                          "and x = peer time / sqltok time (above 1: sqltok faster); '!' = ids differ"]
            lines.append(f"  {'library':44s}" + "".join(f"{_size_label(z):>24s}" for z in sizes))
            for v in variants:
                row = f"  {labels[v]:44s}"
                for size in sizes:
                    s = cells[(v, size)]
                    if "error" in s:
                        row += f"{'error':>24s}"
                        continue
                    mine = _single_mine(v)
                    ms = cells.get((mine, size))
                    x = "" if v == mine or not ms or "error" in ms else f" {s['seconds'] / ms['seconds']:5.2f}x"
                    row += f"{s['us_call']:10.2f} ({s['mb_s']:6.1f}){x:7s}{'' if s['conforming'] else '!'}"
                lines.append(row)
            for mine in [v for v in variants if v in SINGLE_SQLTOK]:
                for size in sizes:
                    ms = cells[(mine, size)]
                    peers = [(v, s) for (v, z), s in cells.items() if z == size and _single_mine(v) == mine
                             and v != mine and s.get("conforming")]
                    if "error" in ms or not peers:
                        continue
                    fv, fs = min(peers, key=lambda p: p[1]["seconds"])
                    ratio = fs["seconds"] / ms["seconds"]
                    verdicts.append({"mode": "single", "corpus": c, "tokenizer": t["name"], "sqltok": mine,
                                     "size": size, "fastest_conforming_peer": fv, "ratio": ratio,
                                     "sqltok_conforming": ms["conforming"],
                                     "faster_than_every_conforming_peer": ratio > 1})
                    lines.append(f"    -> {_size_label(size)}: {labels[mine]} {'IS' if ratio > 1 else 'is NOT'} "
                                 f"faster than every conforming peer: {ratio:.2f}x the fastest, {labels[fv]} "
                                 f"({fs['us_call']:.2f} us/call)" + ("" if ms["conforming"] else
                                                                   " [but sqltok's output does NOT conform]"))
            lines += _gc_lines(sruns, c, tkey, variants, labels, sizes)
            for (v, size), s in cells.items():
                s.update(corpus=c, tokenizer=t["name"], variant=v, size=size)
    return lines, verdicts


def _gc_lines(sruns: dict, corpus: str, tkey: str, variants: list, labels: dict, sizes: list[int]) -> list[str]:
    """Per library: ms in the garbage collector during its timed calls (and how many full collections)
    at each size, summed over rounds; every run collected and froze what it held first (`_gc_watch`)."""
    lines = ["  garbage collector in the timed calls (on; what the process held frozen first): ms (full collections)"]
    for v in variants:
        runs = {z: [r for r in sruns.get((corpus, tkey, v, z), []) if "gc_seconds" in r] for z in sizes}
        if not any(runs.values()):
            continue
        row = f"    {labels[v]:42.42s}"
        for z in sizes:
            ms = 1e3 * sum(r["gc_seconds"] for r in runs[z])
            row += f"{ms:10.1f} ({sum(r['gc_full'] for r in runs[z]):2d} full)     "
        lines.append(row)
    return lines


def _single_mine(variant: str) -> str:
    """The sqltok row a single-text row is compared with."""
    return "sqltok-decode" if variant.endswith("-decode") else "sqltok-wp" if variant.endswith("-wp") else "sqltok"


def _size_label(size: int) -> str:
    return f"{size // 1024} KB" if size >= 1024 else f"{size} B"


def describe_corpus(c: dict) -> str:
    src = ", ".join(Path(s).name for s in c["sources"])
    how = (f"CYCLED: its {c['base_docs']:,} real documents ({c['base_bytes'] / 1e6:.2f} MB) taken "
           f"{c['passes']} times over" if c["cycled"] else "the first documents, none repeated")
    return f"{c['label']} ({src}): {c['docs']:,} documents, {c['bytes'] / 1e6:.2f} MB; {how}"


def prepare_trained(args, en_docs: list[str], work: Path) -> dict:
    """Train (or load) the sqltok model and write it as `.model` (sqltok), `.tiktoken` (ranks = ids,
    for tiktoken and the peers that read ranks) and `tokenizer.json` (when the model is simple)."""
    import base64

    import duckdb
    import sqltok
    from sqltok.pretokenizer.patterns import O200K as MAIN_PATTERN

    info: dict = {}
    if args.sqltok_model:
        con = duckdb.connect(args.db, read_only=True)
        sqltok.register(con)
        name = args.sqltok_model
        info["source"] = f"model {name!r} of {args.db}"
    else:
        import pyarrow as pa

        target, total, docs = int(args.train_mb * 1e6), 0, []
        for t in en_docs:
            if total >= target:
                break
            docs.append(t)
            total += len(t.encode("utf-8"))
        con = duckdb.connect(str(work / "train.duckdb"))
        con.execute(f"SET threads = {max(args.threads)}")
        sqltok.register(con)
        con.register("train_docs", pa.table({"text": pa.array(docs, pa.string())}))
        name = "bench32k"
        t0 = time.perf_counter()
        rep = sqltok.train_bpe(con, "SELECT text FROM train_docs", vocab_size=args.vocab, model=name, simple=True)
        info["source"] = (f"trained here: vocab {args.vocab}, simple=True, on the first {len(docs):,} English "
                          f"documents ({total / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s")
    model = sqltok.load_model(con, name)
    if model.method != "word":
        raise SystemExit(f"model {name!r} is a {model.method} model; only word models can be benchmarked")
    files = {"sqltok": str(work / f"{name}.model"), "tiktoken": str(work / f"{name}.tiktoken")}
    sqltok.export_model(con, name, files["sqltok"])
    with open(files["tiktoken"], "w", encoding="ascii") as f:
        for i, token in enumerate(model.tokens):
            f.write(f"{base64.b64encode(token).decode()} {i}\n")
    if model.script_aware:
        info["note"] = ("script-aware model: no tokenizer.json (HF cannot split by script); the peers use "
                        "the GPT-4o pattern alone, so they are not expected to conform")
        files["json"] = None
    else:
        files["json"] = str(work / f"{name}.json")
        sqltok.export_model(con, name, files["json"], format="hf")
    con.close()
    return {"name": name, "label": f"sqltok model {name} (vocab {len(model.tokens):,})", **files,
            "pattern": MAIN_PATTERN, "special": {}, "info": info["source"], "note": info.get("note"),
            "variants": [v for v in VARIANTS if files["json"] or VARIANTS[v][1] != "json"]}


def child_env(threads: int) -> dict:
    env = dict(os.environ)
    for var in ("FASTOKENS_INPUT_CACHE", "FASTOKENS_SEGMENT_CACHE"):  # caches off: cold runs
        env.pop(var, None)
    k = str(threads)
    env.update(RAYON_NUM_THREADS=k, RAYON_RS_NUM_CPUS=k, OMP_NUM_THREADS=k, FASTOKENS_BPE_THREADS=k,
               TOKENIZERS_PARALLELISM="false" if threads == 1 else "true")
    return env


def run_child(spec: dict, timeout: float) -> dict:
    try:
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                             env=child_env(spec["threads"]), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        return {"error": lines[-1][:300] if lines else f"exit code {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------ reporting

def load_text(*groups: dict) -> str:
    loads = sorted(r["load_avg"] for g in groups for rs in g.values() for r in rs if "load_avg" in r)
    if not loads:
        return "n/a"
    return f"min {loads[0]:.2f}, median {loads[len(loads) // 2]:.2f}, max {loads[-1]:.2f}"


def summarize(runs: list[dict], nbytes: int) -> dict:
    """Best of the rounds (a shared machine only ever slows a run down), with the spread."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0]["error"] if runs else "not run"}
    best = min(ok, key=lambda r: r["seconds"])
    mbs = [nbytes / 1e6 / r["seconds"] for r in ok]
    hashes = sorted({r["sha256"] for r in ok})
    return {"mb_s": nbytes / 1e6 / best["seconds"], "tok_s": best["tokens"] / best["seconds"],
            "seconds": best["seconds"], "cpu_ratio": best["cpu"] / best["seconds"], "tokens": best["tokens"],
            "spread": (max(mbs) - min(mbs)) / max(mbs), "rounds": len(ok), "sha256": hashes[0],
            "stable": len(hashes) == 1, "errors": [r["error"] for r in runs if "error" in r],
            "warmup_ms": _median_ms([r.get("warmup_seconds") for r in ok]),
            "mb_s_all": [round(x, 3) for x in mbs]}


def _median_ms(values: list) -> float | None:
    values = sorted(v for v in values if v is not None)
    return 1000 * values[len(values) // 2] if values else None


def conformance(rows: dict, refs: dict, sqltok_src: str = "tiktoken") -> None:
    """Mark each row against its reference hash (tiktoken for ranks, HF for tokenizer.json; sqltok's
    rows against the file it loaded, `sqltok_src`)."""
    for (variant, k), s in rows.items():
        if "error" in s:
            s["conforming"] = None
            continue
        src = sqltok_src if variant in SQLTOK_VARIANTS else \
            VARIANTS.get(variant, (None, "json" if variant == "hf" else "tiktoken"))[1]
        ref_variant = "tiktoken" if src == "tiktoken" else "hf"
        ref = refs.get(ref_variant)
        s["reference"] = ref_variant
        s["conforming"] = None if ref is None else (s["sha256"] == ref and s["stable"])


def reference_hashes(rows: dict) -> dict:
    refs = {}
    for variant in ("tiktoken", "hf"):
        hashes = {s["sha256"] for (v, _), s in rows.items() if v == variant and "error" not in s}
        if len(hashes) == 1:
            refs[variant] = hashes.pop()
    return refs


def fmt_row(label: str, k: int, s: dict, ratios: list[str], conform: str) -> str:
    if "error" in s:
        return f"  {label:<38} {k:>3}  FAILED: {s['error']}"
    return (f"  {label:<38} {k:>3} {s['mb_s']:>8.2f} {s['tok_s'] / 1e6:>7.2f} {s['cpu_ratio']:>6.2f} "
            f"{100 * s['spread']:>5.0f}%  {s['sha256'][:12]}  {conform:<15}" + "".join(f"{r:>11}" for r in ratios))


def conform_text(variant: str, s: dict) -> str:
    if s.get("conforming") is None:
        return "? (no ref)" if "error" not in s else ""
    if variant == s.get("reference"):
        return "reference"
    mark = "yes" if s["conforming"] else "NO"
    return f"{mark} (={'tiktoken' if s['reference'] == 'tiktoken' else 'HF'})" if s["conforming"] else \
        f"NO (vs {'tiktoken' if s['reference'] == 'tiktoken' else 'HF'})"


def table(title: str, rows: dict, labels: dict, mine: tuple[str, ...], threads: list[int]) -> tuple[list[str], list[dict]]:
    """Rows: (variant, k) -> summary. Ratio columns: each sqltok variant's MB/s over the row's."""
    head = (f"  {'library':<38} {'thr':>3} {'MB/s':>8} {'Mtok/s':>7} {'cpu/w':>6} {'spread':>6}  "
            f"{'ids sha256':<12}  {'conforming':<15}" + "".join(f"{m.split('-', 1)[1] + '/peer':>11}" for m in mine))
    lines, verdicts = [title, head], []
    for k in threads:
        for variant in labels:
            s = rows.get((variant, k))
            if s is None:
                continue
            ratios = []
            for m in mine:
                ms = rows.get((m, k))
                if variant in mine or ms is None or "error" in ms or "error" in s:
                    ratios.append("-")
                else:
                    ratios.append(f"{ms['mb_s'] / s['mb_s']:.2f}x")
            lines.append(fmt_row(labels[variant], k, s, ratios, conform_text(variant, s)))
        warm = [f"{labels[v]} {rows[(v, k)]['warmup_ms']:.0f}" for v in labels
                if rows.get((v, k), {}).get("warmup_ms") is not None]
        if warm:
            lines.append(f"    untimed warm-up call on one sentence, ms (median): {', '.join(warm)}")
        for m in mine:
            ms = rows.get((m, k))
            if ms is None or "error" in ms:
                continue
            peers = [(v, s) for (v, kk), s in rows.items() if kk == k and v not in mine and s.get("conforming")]
            bad = [labels[v] for (v, kk), s in rows.items() if kk == k and v not in mine and not s.get("conforming")]
            if not peers:
                continue
            fastest_v, fastest = max(peers, key=lambda p: p[1]["mb_s"])
            wins = ms["mb_s"] > fastest["mb_s"]
            verdicts.append({"threads": k, "sqltok": m, "sqltok_conforming": ms.get("conforming"),
                             "fastest_conforming_peer": fastest_v, "ratio": ms["mb_s"] / fastest["mb_s"],
                             "faster_than_every_conforming_peer": wins, "excluded_non_conforming": bad})
            lines.append(f"    -> {k} thread{'s' if k > 1 else ''}: {labels[m]} "
                         f"{'IS' if wins else 'is NOT'} faster than every conforming peer: "
                         f"{ms['mb_s'] / fastest['mb_s']:.2f}x the fastest, {labels[fastest_v]} "
                         f"({fastest['mb_s']:.2f} MB/s)" + ("" if ms.get("conforming") else
                                                            " [but sqltok's own ids do NOT match the reference]")
                         + (f"; not counted (non-conforming or failed): {', '.join(bad)}" if bad else ""))
    return lines, verdicts


# ----------------------------------------------------------------------------------------------- main

def encoder_build() -> dict:
    """sha256 and mtime of sqltok's compiled modules: the work tree may be rebuilt during a long run."""
    import sqltok

    out = {}
    root = Path(sqltok.__file__).parent
    for so in sorted(root.rglob("_*.so")):
        out[str(so.relative_to(root))] = {"sha256": hashlib.sha256(so.read_bytes()).hexdigest()[:12],
                        "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(so.stat().st_mtime))}
    return out


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("tiktoken", "tokenizers", "fastokens", "splintr-rs", "riptoken", "duckdb", "pyarrow", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    import sqltok

    out["sqltok"] = getattr(sqltok, "__version__", None)
    try:
        out["sqltok_commit"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                              capture_output=True, text=True).stdout.strip() or None
    except OSError:
        out["sqltok_commit"] = None
    return out


def tiktoken_files(name: str, folder: Path, pattern: str, special: dict) -> dict:
    """An OpenAI encoding from its folder's `NAME.tiktoken` and `tokenizer.json`, run by every peer."""
    ranks = str(folder / f"{name}.tiktoken")
    return {"name": name, "label": name, "sqltok": ranks, "tiktoken": ranks, "json": str(folder / "tokenizer.json"),
            "pattern": pattern, "special": special, "info": f"files in {folder}", "note": None,
            "variants": list(VARIANTS), "single": list(SINGLE_VARIANTS)}


def json_files(name: str, path: Path, pattern: str) -> dict:
    """A tokenizer known by its tokenizer.json alone (no ranks): sqltok loads that file, HF is the
    reference, and the peers that read tokenizer.json run beside it."""
    return {"name": name, "label": f"{name} (tokenizer.json)", "sqltok": str(path), "tiktoken": None,
            "json": str(path), "pattern": pattern, "special": {}, "info": f"file {path}", "note": None,
            "sqltok_src": "json", "variants": list(JSON_VARIANTS), "single": list(JSON_SINGLE)}


def parse_args(argv=None):
    fixtures = SHARED / "fixtures"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--en", type=Path, default=SHARED / "bench" / "en100.parquet",
                    help="English corpus (Parquet or JSON lines)")
    ap.add_argument("--code", type=Path, default=fixtures / "corpora" / "code.jsonl", help="code corpus")
    ap.add_argument("--multi", type=Path, nargs="+", default=[fixtures / "corpora"],
                    help="multilingual files, or folders whose *.jsonl except en/code are taken")
    ap.add_argument("--text-key", default="text", help="text column / JSON key (default: text)")
    ap.add_argument("--o200k", type=Path, default=fixtures / "tokenizers" / "o200k_base",
                    help="folder holding o200k_base.tiktoken and tokenizer.json")
    ap.add_argument("--cl100k", type=Path, default=fixtures / "tokenizers" / "cl100k_base",
                    help="folder holding cl100k_base.tiktoken and tokenizer.json")
    ap.add_argument("--tokenizers", nargs="+", default=["o200k", "cl100k", "trained", "bert"],
                    choices=["o200k", "cl100k", "trained", "bert", "llama3", "qwen3"],
                    help="which tokenizers to run (llama3, qwen3: tokenizer.json only, on request)")
    ap.add_argument("--llama3", type=Path, default=fixtures / "tokenizers" / "llama3" / "tokenizer.json",
                    help="Llama 3's tokenizer.json")
    ap.add_argument("--qwen3", type=Path, default=fixtures / "tokenizers" / "qwen3" / "tokenizer.json",
                    help="Qwen 3's tokenizer.json")
    ap.add_argument("--mb", type=float, default=50, help="size of each corpus in MB (10^6 bytes)")
    ap.add_argument("--rounds", type=int, default=3, help="measurements per library and thread count")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--sqltok-model", help="benchmark this model of --db instead of training one")
    ap.add_argument("--db", help="DuckDB file holding --sqltok-model")
    ap.add_argument("--vocab", type=int, default=32768, help="vocab size of the trained model")
    ap.add_argument("--train-mb", type=float, default=20, help="MB of the English corpus to train on")
    ap.add_argument("--corpora", nargs="+", default=["en", "code", "multi"], choices=list(CORPUS_NAMES))
    ap.add_argument("--duckdb-corpora", nargs="*", default=["en"], choices=list(CORPUS_NAMES),
                    help="corpora for the in-DuckDB comparison (default: en; none to skip)")
    ap.add_argument("--skip", nargs="*", default=[], help="variants to leave out, e.g. hf splintr-json")
    ap.add_argument("--no-warmup", action="store_true",
                    help="time each library's very first call (default: after an untimed call on one sentence)")
    ap.add_argument("--modes", nargs="+", default=["batch", "single"], choices=["batch", "single"],
                    help="batch: whole corpora per call; single: one call per text at each --sizes")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="single-text sizes in bytes")
    ap.add_argument("--single-mb", type=float, default=2, help="MB of texts per single-text size")
    ap.add_argument("--bert", type=Path, default=fixtures / "tokenizers" / "bert-base-uncased" / "tokenizer.json",
                    help="WordPiece tokenizer.json for the single-text WordPiece rows")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per subprocess")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if bool(args.sqltok_model) != bool(args.db):
        ap.error("--sqltok-model and --db go together")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.child:
        child_main(args.child)
        return
    t_start = time.perf_counter()
    vers, build = versions(), encoder_build()
    command = " ".join(["python", "bench/encode.py", *(sys.argv[1:] if argv is None else argv)])
    with tempfile.TemporaryDirectory(prefix="sqltok-encode-") as tmp:
        work = Path(tmp)
        # ---- corpora
        _log("building corpora ...")
        en_docs = read_docs(args.en, args.text_key)
        corpora, bases = {}, {}
        for name in args.corpora:
            if name == "en":
                base, sources = en_docs, [str(args.en)]
            elif name == "code":
                base, sources = read_docs(args.code, args.text_key), [str(args.code)]
            else:
                files = multi_files(args.multi)
                base = list(itertools.chain.from_iterable(read_docs(f, args.text_key) for f in files))
                random.Random(0).shuffle(base)  # languages interleaved, so every thread gets a mix
                sources = [str(f) for f in files]
            corpora[name] = build_corpus(name, base, sources, args.mb, work / f"{name}.parquet")
            bases[name] = base
        singles = {(c, z): single_texts(c, bases[c], z, args.single_mb, work / f"single-{c}-{z}.parquet")
                   for c in corpora for z in args.sizes} if "single" in args.modes else {}
        del bases
        # ---- tokenizers
        _log("preparing tokenizers ...")
        from sqltok.pretokenizer.patterns import CL100K, LLAMA3, QWEN2, O200K as MAIN_PATTERN

        o200k = tiktoken_files("o200k_base", args.o200k, MAIN_PATTERN, O200K_SPECIAL)
        cl100k = tiktoken_files("cl100k_base", args.cl100k, CL100K, CL100K_SPECIAL)
        trained = prepare_trained(args, en_docs, work) if "trained" in args.tokenizers else None
        if trained is not None:
            trained["single"] = [v for v in SINGLE_VARIANTS if trained["json"] or SINGLE_VARIANTS[v][1] != "json"]
        bert = {"name": "bert-base-uncased", "label": "bert-base-uncased (WordPiece)", "sqltok": str(args.bert),
                "tiktoken": None, "json": str(args.bert), "pattern": None, "special": {},
                "info": f"file {args.bert}", "note": None, "variants": [], "single": list(WORDPIECE_VARIANTS)}
        del en_docs
        llama3, qwen3 = json_files("llama3", args.llama3, LLAMA3), json_files("qwen3", args.qwen3, QWEN2)
        toks = {name: t for name, t in (("o200k", o200k), ("cl100k", cl100k), ("trained", trained), ("bert", bert),
                                        ("llama3", llama3), ("qwen3", qwen3)) if name in args.tokenizers}
        for t in toks.values():
            t["variants"] = [v for v in t["variants"] if v not in args.skip] if "batch" in args.modes else []
            t["single"] = [v for v in t["single"] if v not in args.skip] if "single" in args.modes else []
        # ---- encode runs: every round goes through everything, so drift hits all libraries alike
        jobs = [(c, t, v, k) for c in corpora for t in toks for v in toks[t]["variants"] for k in args.threads]
        djobs = [(c, v, k) for c in args.duckdb_corpora if c in corpora for v in DUCKDB_VARIANTS
                 if v not in args.skip for k in args.threads] if "batch" in args.modes else []
        sjobs = [(c, t, v, z) for c in corpora for t in toks for v in toks[t]["single"] for z in args.sizes]
        runs: dict = {}
        druns: dict = {}
        sruns: dict = {}
        total, done = args.rounds * (len(jobs) + len(djobs) + len(sjobs)), 0
        for rnd in range(args.rounds):
            for c, t, v, k in jobs:
                tok = {key: toks[t][key] for key in ("name", "sqltok", "tiktoken", "json", "pattern", "special")}
                spec = {"mode": "encode", "corpus": corpora[c]["path"], "variant": v, "threads": k, "tok": tok,
                        "warmup": not args.no_warmup}
                r = run_child(spec, args.timeout)
                runs.setdefault((c, t, v, k), []).append({"round": rnd, **r})
                done += 1
                _log(f"[{done}/{total}] {c} {t} {v} threads={k} round={rnd + 1}: " +
                     (r["error"] if "error" in r else f"{corpora[c]['bytes'] / 1e6 / r['seconds']:.2f} MB/s"))
            for c, t, v, z in sjobs:
                tok = {key: toks[t][key] for key in ("name", "sqltok", "tiktoken", "json", "pattern", "special")}
                spec = {"mode": "single", "corpus": singles[(c, z)]["path"], "variant": v, "threads": 1, "tok": tok,
                        "warmup": not args.no_warmup}
                r = run_child(spec, args.timeout)
                sruns.setdefault((c, t, v, z), []).append({"round": rnd, **r})
                done += 1
                _log(f"[{done}/{total}] single {c} {t} {v} {z} B round={rnd + 1}: " +
                     (r["error"] if "error" in r else f"{1e6 * r['seconds'] / r['calls']:.2f} us/call"))
            for c, v, k in djobs:
                tok = {key: o200k[key] for key in ("name", "sqltok", "tiktoken", "json", "pattern", "special")}
                spec = {"mode": "duckdb", "corpus": corpora[c]["path"], "variant": v, "threads": k, "tok": tok,
                        "warmup": not args.no_warmup}
                r = run_child(spec, args.timeout)
                druns.setdefault((c, v, k), []).append({"round": rnd, **r})
                done += 1
                _log(f"[{done}/{total}] duckdb {c} {v} threads={k} round={rnd + 1}: " +
                     (r["error"] if "error" in r else f"{corpora[c]['bytes'] / 1e6 / r['seconds']:.2f} MB/s"))
    # ---- report
    rebuilt = encoder_build() != build
    out = [f"# Encoding benchmark: {command}",
           f"# {os.cpu_count()} CPUs, load average at the end {os.getloadavg()[0]:.2f}; "
           + ", ".join(f"{k} {v}" for k, v in vers.items() if v),
           f"# MB/s and Mtok/s: best of {args.rounds} round(s), each a fresh process (tokenizer loaded "
           "untimed); spread = (best - worst) / best; cpu/w = CPU seconds / wall seconds of the timed call;",
           "# runs with fewer threads than CPUs are pinned to that many CPUs. ratio columns: sqltok's MB/s / "
           "the row's, same threads.",
           ("# the timed call is each process's first (--no-warmup): it includes what a library initializes "
            "lazily" if args.no_warmup else
            "# the timed call follows one untimed call on a sentence not from the corpus: what a library "
            "initializes lazily on first use is not timed (its ms are listed under each table); no cache "
            "has seen the timed documents"),
           f"# load average (1 min) when the runs started: {load_text(runs, druns, sruns)} (other work on this machine "
           "shares the cores: it slows 2-thread runs most)",
           "# list = encode_ordinary_batch (Python lists out), arrow = encode_arrow (Arrow list<int32> out).",
           "# peers' list APIs include building the Python id lists (HF, fastokens: Encoding.ids); "
           "'flat' variants return one buffer of ids + offsets.",
           "# cycled corpora repeat documents, so libraries with a cache (sqltok, HF, splintr, fastokens) "
           "meet words again within a run.",
           "# DuckDB: sqltok's encode() UDF picks its own thread count (up to 2) whatever SET threads says; "
           "the CPU pinning holds its 1-thread row to 1 CPU.",
           "# o200k, cl100k: fastokens (tokenizer.json) gets the file with the special tokens removed from model.vocab"
           " (kept in added_tokens): fastokens 0.3.5 refuses non-contiguous vocab ids."]
    import sqltok

    combined = hashlib.sha256(json.dumps(build, sort_keys=True).encode()).hexdigest()[:12]
    out.append(f"# sqltok from {Path(sqltok.__file__).parent}: {len(build)} compiled modules, combined hash {combined}, "
               f"newest {max((v['mtime'] for v in build.values()), default='-')} UTC"
               + ("; CHANGED DURING THE RUN: later runs used another build" if rebuilt else ""))
    for t in toks.values():
        out.append(f"# tokenizer {t['label']}: {t['info']}" + (f"; {t['note']}" if t["note"] else ""))
    summary, verdicts = [], []
    mine = SQLTOK_VARIANTS
    for c, corpus in corpora.items():
        out += ["", f"== {describe_corpus(corpus)}"]
        for tkey, t in toks.items():
            if not t["variants"]:
                continue
            rows = {(v, k): summarize(runs.get((c, tkey, v, k), []), corpus["bytes"])
                    for v in t["variants"] for k in args.threads}
            refs = reference_hashes(rows)
            conformance(rows, refs, t.get("sqltok_src", "tiktoken"))
            labels = {v: VARIANTS[v][0] for v in t["variants"]}
            note = ""
            if "tiktoken" in refs and "hf" in refs:
                note = f" (tokenizer.json ids {'=' if refs['tiktoken'] == refs['hf'] else '!='} .tiktoken ids)"
            lines, vds = table(f"-- {t['label']}{note}", rows, labels, mine, args.threads)
            out += lines
            for (v, k), s in rows.items():
                summary.append({"corpus": c, "tokenizer": t["name"], "variant": v, "threads": k, **s})
            verdicts += [{"corpus": c, "tokenizer": t["name"], **vd} for vd in vds]
    dsummary = []
    for c in args.duckdb_corpora if "batch" in args.modes else []:
        if c not in corpora:
            continue
        rows = {(v, k): summarize(druns.get((c, v, k), []), corpora[c]["bytes"])
                for v in DUCKDB_VARIANTS if v not in args.skip for k in args.threads}
        refs = reference_hashes(rows)
        for (v, k), s in rows.items():
            if "error" not in s:
                s["reference"] = "hf" if v == "hf" else "tiktoken"
                ref = refs.get(s["reference"])
                s["conforming"] = None if ref is None else (s["sha256"] == ref and s["stable"])
        labels = {v: DUCKDB_VARIANTS[v] for v in DUCKDB_VARIANTS if v not in args.skip}
        out += ["", f"== DuckDB, o200k_base, {CORPUS_NAMES[c]} ({corpora[c]['docs']:,} documents, "
                    f"{corpora[c]['bytes'] / 1e6:.2f} MB): sqltok times `UPDATE docs SET ids = encode('o200k', text)`;",
                "   peers (and sqltok-py) time fetch text -> encode -> Arrow -> CREATE TABLE docs_ids; SET threads = k"]
        lines, vds = table("", rows, labels, ("sqltok-sql", "sqltok-py"), args.threads)
        out += lines[1:]
        for (v, k), s in rows.items():
            dsummary.append({"corpus": c, "variant": v, "threads": k, **s})
        verdicts += [{"corpus": c, "tokenizer": "o200k_base", "duckdb": True, **vd} for vd in vds]
    if singles:
        out += ["", "== single texts: one call per text, one thread, fresh process; texts cut from each corpus "
                    "stream: " + ", ".join(f"{_size_label(z)} x {singles[(c, z)]['texts']:,}" for c in list(corpora)[:1]
                                            for z in args.sizes) + " (per corpus)"]
        lines, svds = single_tables(corpora, singles, sruns, toks, args.sizes)
        out += lines
        verdicts += svds
    out.append("")
    out.append(f"# total {time.perf_counter() - t_start:.0f} s")
    print("\n".join(out))
    blob = {"bench": "encode", "command": command, "args": {k: (str(v) if isinstance(v, Path) else v)
                                                             for k, v in vars(args).items() if k != "child"},
            "versions": vers, "sqltok_build": build, "sqltok_rebuilt_during_run": rebuilt,
            "cpus": os.cpu_count(),
            "corpora": list(corpora.values()),
            "tokenizers": [{k: v for k, v in t.items() if k not in ("pattern",)} for t in toks.values()],
            "summary": summary, "duckdb": dsummary, "verdicts": verdicts,
            "runs": [{"corpus": c, "tokenizer": t, "variant": v, "threads": k, **r}
                     for (c, t, v, k), rs in runs.items() for r in rs],
            "duckdb_runs": [{"corpus": c, "variant": v, "threads": k, **r}
                            for (c, v, k), rs in druns.items() for r in rs],
            "single_texts": list(singles.values()),
            "single_runs": [{"corpus": c, "tokenizer": t, "variant": v, "size": z, **r}
                            for (c, t, v, z), rs in sruns.items() for r in rs]}
    print(json.dumps(blob, default=str))


if __name__ == "__main__":
    main()
