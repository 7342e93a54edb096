"""Counting time and peak memory for documents that defeat naive counting, at doubling sizes: one
huge whole-file document of real text, the same as one line per document (`--lines`), and a
document with no cut point at all (digits and spaces, which no piece rule may cut). Linear time
shows as a time ratio of about 2 per doubling.

    python bench/big_documents.py CORPUS.parquet [--sizes 64,128,256] [--digits 8,16,32]
                                  [--encode TOKENIZER_FILE [--no-train]]

Each run is `sqltok train FILE --vocab-size 300` in a fresh process (the merge loop is negligible
at that size), so the figures are counting plus the store; sizes are MB. With --encode, the same
documents are also encoded as one text each with that tokenizer, in a fresh process per size:
`token_count(text)` and `encode_ordinary(text)`, seconds and the process's peak RSS (`--no-train`: only
that).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from child import run_child

CHILD = """
import json, re, sys, time, duckdb, sqltok
con = duckdb.connect()
sqltok.register(con)
src = sqltok.Source(path=sys.argv[1], text_mode=sys.argv[2])
t = time.perf_counter()
report = sqltok.train_bpe(con, src, 300, "m")
print(json.dumps({"seconds": time.perf_counter() - t, "count_seconds": report.seconds.get("pretokenize_and_count"),
                  # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so it would show the parent's
                  "rss_mb": int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024,
                  "unique": report.unique_pretokens}))
"""

ENCODE_CHILD = """
import json, re, sys, time, sqltok
tok = sqltok.Tokenizer.load(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
t = time.perf_counter()
n = tok.token_count(text)
count_seconds = time.perf_counter() - t
t = time.perf_counter()
ids = tok.encode_ordinary(text)
print(json.dumps({"count_seconds": count_seconds, "seconds": time.perf_counter() - t, "tokens": n,
                  "rss_mb": int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024}))
"""


def _text(corpus: str, size: int) -> str:
    """At least `size` bytes of the corpus's documents, one per line (line feeds inside kept)."""
    out, n = [], 0
    for batch in pq.ParquetFile(corpus).iter_batches(columns=["text"], batch_size=4096):
        for t in batch.column(0).to_pylist():
            if t:
                out.append(t)
                n += len(t.encode())
                if n >= size:
                    return "\n".join(out)
    raise SystemExit(f"{corpus} holds less than {size:,} bytes")


def _row(label: str, mb: int, r: dict, prev: dict | None) -> str:
    ratio = f"{r['seconds'] / prev['seconds']:.2f}x" if prev else ""
    return f"| {label} | {mb} | {r['seconds']:.2f} | {ratio} | {r['rss_mb']:,.0f} | {r['unique']:,} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--sizes", default="64,128,256")
    ap.add_argument("--digits", default="8,16,32")
    ap.add_argument("--encode", help="a tokenizer file: also encode each document as one text")
    ap.add_argument("--no-train", action="store_true", help="with --encode: the encoding table only")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        text = _text(a.corpus, max(sizes) << 20)
        if a.encode and a.no_train:
            return _encode_rows(a.encode, text, sizes, Path(tmp))
        print("| document | MB | seconds | vs half | peak RSS MB | unique pretokens |")
        print("|---|---|---|---|---|---|")
        for label, mode in (("one whole-file document", "file"), ("one line per document", "line")):
            prev = None
            for mb in sizes:
                path = Path(tmp) / f"{mode}{mb}.txt"
                path.write_text(text[:mb << 20], encoding="utf-8")
                r = run_child(CHILD, [str(path), mode], cwd=str(Path(__file__).parent))
                print(_row(label, mb, r, prev), flush=True)
                prev = r
                path.unlink()
        prev = None
        for mb in (int(s) for s in a.digits.split(",")):
            path = Path(tmp) / f"digits{mb}.txt"
            path.write_text(("1234567890 " * ((mb << 20) // 11 + 1))[:mb << 20], encoding="utf-8")
            r = run_child(CHILD, [str(path), "file"], cwd=str(Path(__file__).parent))
            print(_row("digits, no cut point", mb, r, prev), flush=True)
            prev = r
            path.unlink()
        if a.encode:
            _encode_rows(a.encode, text, sizes, Path(tmp))


def _encode_rows(tokenizer: str, text: str, sizes: list[int], tmp: Path) -> None:
    """One document of each size encoded as one text (the text file read untimed)."""
    print(f"\n| one text, {Path(tokenizer).name} | MB | token_count s | encode_ordinary s | peak RSS MB | tokens |")
    print("|---|---|---|---|---|---|")
    for mb in sizes:
        path = tmp / f"encode{mb}.txt"
        path.write_text(text[:mb << 20], encoding="utf-8")
        r = run_child(ENCODE_CHILD, [tokenizer, str(path)], cwd=str(Path(__file__).parent))
        print(f"| one text | {mb} | {r['count_seconds']:.2f} | {r['seconds']:.2f} | {r['rss_mb']:,.0f} | {r['tokens']:,} |",
              flush=True)
        path.unlink()


if __name__ == "__main__":
    sys.exit(main())
