"""The API beyond encode/decode, sqltok beside the library people call for it, in one run:
tiktoken's `decode_batch`, `decode_bytes_batch`, `encode_to_numpy`, `decode_with_offsets`,
`encode_with_unstable` and a pickle round trip; HF tokenizers' `encode(text).offsets` (byte-level
BPE and WordPiece) and `get_vocab()`.

    python bench/api.py CORPUS [--tokenizers ../shared/fixtures/tokenizers] [--docs 2000] [--rounds 5]

CORPUS: Parquet or JSONL with a `text` column/key (the first --docs documents). Each operation runs
--rounds times, sqltok and the peer alternating; printed: the median time of each, the median of the
per-round ratios (peer time / sqltok time: above 1 means sqltok is faster) and whether the outputs
are identical (sha256 of each library's output). One thread; the last line is one JSON object.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import statistics
import time
from pathlib import Path

import duckdb
import tiktoken
import tiktoken.load
from tokenizers import Tokenizer as HFTokenizer

import sqltok
from sqltok.bpe.tiktoken_file import read_tiktoken

SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "tokenizers"


def read_texts(path: str, n: int) -> list[str]:
    reader = "read_parquet" if path.endswith(".parquet") else "read_json_auto"
    rows = duckdb.sql(f"SELECT text FROM {reader}(?) WHERE text IS NOT NULL LIMIT {int(n)}", params=[path])
    return [r[0] for r in rows.fetchall()]


def digest(value) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def compare(name: str, ours, theirs, rounds: int) -> dict:
    """Time `ours()` and `theirs()` alternately; median seconds, median ratio, identical outputs."""
    t_ours, t_theirs, ratios = [], [], []
    for _ in range(rounds):
        start = time.perf_counter()
        got = ours()
        middle = time.perf_counter()
        want = theirs()
        end = time.perf_counter()
        t_ours.append(middle - start)
        t_theirs.append(end - middle)
        ratios.append((end - middle) / max(middle - start, 1e-9))
    row = {"operation": name, "sqltok_s": statistics.median(t_ours), "peer_s": statistics.median(t_theirs),
           "ratio": statistics.median(ratios), "identical": digest(got) == digest(want)}
    print(f"{name:48s} sqltok {row['sqltok_s'] * 1e3:9.2f} ms   peer {row['peer_s'] * 1e3:9.2f} ms   "
          f"x{row['ratio']:6.2f}   {'identical' if row['identical'] else 'DIFFERENT'}")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--tokenizers", default=str(SHARED))
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    folder = Path(args.tokenizers)
    texts = read_texts(args.corpus, args.docs)
    print(f"{len(texts)} documents, {sum(len(t.encode()) for t in texts) / 1e6:.2f} MB")

    path = folder / "o200k_base" / "o200k_base.tiktoken"
    spec = read_tiktoken(path)
    ours = sqltok.Tokenizer.load(path)
    ref = tiktoken.Encoding(spec.name, pat_str=spec.pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                            special_tokens=spec.special_tokens)
    hf = HFTokenizer.from_file(str(folder / "o200k_base" / "tokenizer.json"))
    bert_path = folder / "bert-base-uncased" / "tokenizer.json"
    bert, hf_bert = sqltok.Tokenizer.load(bert_path), HFTokenizer.from_file(str(bert_path))
    hf_bert.no_padding()
    hf_bert.no_truncation()
    batch = ref.encode_ordinary_batch(texts, num_threads=1)
    short = [t[:40] for t in texts[:20]]
    rows = [
        compare("decode_batch", lambda: ours.decode_batch(batch), lambda: ref.decode_batch(batch, num_threads=1),
                args.rounds),
        compare("decode_bytes_batch", lambda: ours.decode_bytes_batch(batch),
                lambda: ref.decode_bytes_batch(batch, num_threads=1), args.rounds),
        compare("encode_to_numpy (one call a document)",
                lambda: [ours.encode_to_numpy(t, disallowed_special=()).tolist() for t in texts],
                lambda: [ref.encode_to_numpy(t, disallowed_special=()).tolist() for t in texts], args.rounds),
        compare("decode_with_offsets (one call a document)", lambda: [ours.decode_with_offsets(ids) for ids in batch],
                lambda: [ref.decode_with_offsets(ids) for ids in batch], args.rounds),
        compare("encode_with_unstable (20 prefixes of 40 chars)",
                lambda: [(s, sorted(map(tuple, c))) for s, c in map(ours.encode_with_unstable, short)],
                lambda: [(s, sorted(map(tuple, c))) for s, c in map(ref.encode_with_unstable, short)], args.rounds),
        compare("offsets o200k vs HF encode(text).offsets", lambda: [tuple(ours.encode_with_offsets(t)) for t in texts],
                lambda: [(e.ids, e.offsets) for e in (hf.encode(t, add_special_tokens=False) for t in texts)],
                args.rounds),
        compare("offsets bert-base-uncased vs HF", lambda: [tuple(bert.encode_with_offsets(t)) for t in texts],
                lambda: [(e.ids, e.offsets) for e in (hf_bert.encode(t) for t in texts)], args.rounds),
        compare("get_vocab() o200k vs HF", lambda: sorted(ours.get_vocab().items()),
                lambda: sorted(hf.get_vocab().items()), args.rounds),
        compare("pickle round trip (then one encode)",
                lambda: pickle.loads(pickle.dumps(ours)).encode_ordinary(texts[0]),
                lambda: pickle.loads(pickle.dumps(ref)).encode_ordinary(texts[0]), max(1, args.rounds // 2)),
    ]
    print(f"pickle size: sqltok {len(pickle.dumps(ours))} B, tiktoken {len(pickle.dumps(ref))} B")
    print(json.dumps({"documents": len(texts), "rows": rows}))


if __name__ == "__main__":
    main()
