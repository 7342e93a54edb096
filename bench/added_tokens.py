"""tokenizer.json files with HF's added tokens on the families that match them through
`sqltok.added_rows` (WordPiece, SentencePiece): sqltok's `encode_arrow` beside HF `tokenizers`'
`encode_batch` on the same texts, in one run.

    python bench/added_tokens.py [CORPUS.jsonl|.parquet] [--text-key text] [--mb 5] [--threads 1]

Files, built here: bert-base-uncased with four added tokens (normalized, raw, single_word, lstrip +
rstrip) and one flagged special token; Mistral v3 converted, its user-defined pieces as
non-special added tokens (merges kept). Every text gets " [X] NewWord [REFERENCE_DOC_3] " spliced
into its middle so that each row is cut. Printed per file and library: CPU seconds (best of three),
MB per CPU second, and whether the ids are HF's.
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def read_texts(path: Path, key: str, mb: float) -> list[str]:
    """The corpus's texts, cycled until they hold `mb` MB, each with added tokens in its middle."""
    import duckdb
    reader = "read_parquet" if path.suffix == ".parquet" else "read_json_auto"
    docs = [r[0] for r in duckdb.sql(f"SELECT {key} FROM {reader}('{path}') WHERE {key} IS NOT NULL").fetchall()]
    out, size = [], 0
    while size < mb * 1e6:
        for d in docs:
            mid = len(d) // 2
            out.append(d[:mid] + " [X] NewWord [REFERENCE_DOC_3] " + d[mid:])
            size += len(out[-1].encode())
            if size >= mb * 1e6:
                break
    return out


def files(folder: Path) -> dict[str, str]:
    import tokenizers
    from test_sentencepiece_added_tokens import v3_json
    from test_wordpiece_added_tokens import ADDED, SPECIAL
    bert = folder / "bert.json"
    bert.write_bytes(lzma.decompress((REPO / "tests/data/tokenizers/bert-base-uncased_tokenizer.json.xz").read_bytes()))
    hf = tokenizers.Tokenizer.from_file(str(bert))
    hf.no_padding()
    hf.no_truncation()
    hf.add_tokens(ADDED)
    hf.add_special_tokens(SPECIAL)
    return {"bert-base-uncased + added": hf.to_str(), "mistral-v3 user-defined": v3_json()}


def cpu(fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(3):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=REPO / "tests/data/corpora_sample.jsonl")
    ap.add_argument("--text-key", default="text")
    ap.add_argument("--mb", type=float, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    import pyarrow as pa
    import tokenizers

    import sqltok
    texts = read_texts(args.corpus, args.text_key, args.mb)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    arrow = pa.array(texts, pa.large_string())
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files(Path(tmp)).items():
            path = Path(tmp) / "tokenizer.json"
            path.write_text(text, encoding="utf-8")
            ours, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
            t_ours, ids = cpu(lambda: ours.encode_arrow(arrow, "all", threads=args.threads))
            t_hf, enc = cpu(lambda: hf.encode_batch(texts, add_special_tokens=name.startswith("bert")))
            same = ids.to_pylist() == [e.ids for e in enc]
            print(f"{name:28} {mb:.1f} MB  sqltok {t_ours:.2f} s CPU ({mb / t_ours:.1f} MB/s)  "
                  f"HF {t_hf:.2f} s CPU ({mb / t_hf:.1f} MB/s)  ids equal: {same}")


if __name__ == "__main__":
    main()
