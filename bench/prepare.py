"""Corpus preparation benchmark (issue 19): each step and the whole `prepare` pipeline, beside the
Python-per-string way of the seed's appendix and the libraries a user would otherwise call.

    python bench/prepare.py [--en ../shared/bench/en100.parquet] [--corpora ../shared/fixtures/corpora/*.jsonl]
                            [--mb 100] [--peer-mb 5] [--tasks language pii dedup exact pipeline accuracy]

Per corpus (the English one, and the multilingual fixtures read as one corpus), the first --mb MB:
- language: sqltok `detect_language` in SQL beside `py3langid.classify` and lingua's
  `detect_language_of` (high accuracy, all languages) per document;
- pii: sqltok `mask_pii` in SQL beside the seed appendix's way (`re.sub` per pattern, per string) and
  sqltok's own finder called per string from Python;
- dedup: `sqltok_near_duplicates` (threshold 0.8, 128 permutations, word 5-grams) beside datasketch
  MinHash (`update_batch` of the shingles) + MinHashLSH insert and query per document;
- exact: `sqltok_exact_duplicates` beside a Python set of SHA-1s of the normalized texts;
- pipeline: `prepare` with every step (NFC, language, PII, exact+near dedup, temperature 0.3, 1% valid);
- accuracy: language accuracy per labelled fixture corpus (--accuracy-docs each) of sqltok, py3langid
  and lingua.
Peers are slow, so they run on the first --peer-mb MB; throughputs are MB/s and documents/s of each,
and `x` = sqltok's MB/s / the peer's MB/s. DuckDB and sqltok use every core they may (SQLTOK_THREADS
to pin); run on a quiet machine. The last line printed is one JSON object with every result.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import re
import tempfile
import time
from pathlib import Path

import duckdb

import sqltok
from sqltok.corpus.clean import CleanSettings
from sqltok.corpus.prepare import Dedup, PrepareSettings, prepare
from sqltok.corpus.sources import Source, quote_literal

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# The seed appendix's way: one regular expression after another over each string.
APPENDIX = [(re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[EMAIL]"),
            (re.compile(r"(?:\+?\d{1,3}[ -]?)?(?:\(\d{3}\)|\d{3})[ -]?\d{3}[ -]?\d{4}"), "[PHONE]"),
            (re.compile(r"1[3-9]\d{9}"), "[PHONE]"),
            (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "[IP]"),
            (re.compile(r"\b(?:\d[ -]?){13,19}\b"), "[CARD]")]


def _load(con: duckdb.DuckDBPyConnection, paths: list[str], mb: float) -> tuple[int, int]:
    """Table `docs(doc_id, text)`: the first `mb` MB of the corpus files, in order."""
    union = " UNION ALL ".join(
        f"SELECT text FROM read_parquet({quote_literal(p)})" if p.endswith(".parquet") else
        f"SELECT text FROM read_json({quote_literal(p)}, format = 'newline_delimited', columns = {{'text': 'VARCHAR'}})"
        for p in paths)
    con.execute(f"CREATE OR REPLACE TABLE docs AS SELECT doc_id, text FROM (SELECT doc_id, text, "
                f"sum(strlen(text)) OVER (ORDER BY doc_id ROWS UNBOUNDED PRECEDING) AS upto FROM "
                f"(SELECT row_number() OVER () AS doc_id, text FROM ({union}) WHERE text IS NOT NULL)) "
                f"WHERE upto - strlen(text) < {mb * 1e6}")
    return con.execute("SELECT count(*), sum(strlen(text)) FROM docs").fetchone()


def _rate(seconds: float, docs: int, nbytes: int) -> dict:
    return {"seconds": round(seconds, 3), "docs_per_s": round(docs / seconds, 1),
            "mb_per_s": round(nbytes / 1e6 / seconds, 3)}


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _peer_texts(con, peer_mb: float) -> tuple[list[str], int]:
    texts, size = [], 0
    for (t,) in con.execute("SELECT text FROM docs ORDER BY doc_id").fetchall():
        texts.append(t)
        size += len(t.encode())
        if size >= peer_mb * 1e6:
            break
    return texts, size


def bench_language(con, docs, nbytes, texts, size):
    import py3langid
    from lingua import LanguageDetectorBuilder

    con.execute("SELECT detect_language('warm up')").fetchall()  # loads the model, untimed
    ours = _rate(_timed(lambda: con.execute("SELECT count(detect_language(text)) FROM docs").fetchall()), docs, nbytes)
    py3langid.classify("warm up")
    langid = _rate(_timed(lambda: [py3langid.classify(t) for t in texts]), len(texts), size)
    detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()
    lingua = _rate(_timed(lambda: [detector.detect_language_of(t) for t in texts]), len(texts), size)
    return {"sqltok": ours, "py3langid": langid, "lingua": lingua}


def bench_pii(con, docs, nbytes, texts, size):
    from sqltok.corpus.pii import mask_pii

    def appendix():
        for t in texts:
            for pattern, mark in APPENDIX:
                t = pattern.sub(mark, t)

    ours = _rate(_timed(lambda: con.execute("SELECT count(mask_pii(text)) FROM docs").fetchall()), docs, nbytes)
    return {"sqltok": ours, "appendix_regex_loop": _rate(_timed(appendix), len(texts), size),
            "sqltok_per_string": _rate(_timed(lambda: [mask_pii(t) for t in texts]), len(texts), size)}


def bench_dedup(con, docs, nbytes, texts, size):
    from datasketch import MinHash, MinHashLSH

    def datasketch():
        lsh, sigs = MinHashLSH(threshold=0.8, num_perm=128), []
        for i, t in enumerate(texts):
            words = t.lower().split()
            m = MinHash(num_perm=128)
            m.update_batch([" ".join(words[j:j + 5]).encode() for j in range(max(1, len(words) - 4))])
            lsh.insert(i, m)
            sigs.append(m)
        return [lsh.query(m) for m in sigs]

    q = "SELECT count(*) FROM sqltok_near_duplicates('SELECT doc_id, text FROM docs', threshold := 0.8)"
    ours = _rate(_timed(lambda: con.execute(q).fetchall()), docs, nbytes)
    return {"sqltok": ours, "datasketch": _rate(_timed(datasketch), len(texts), size)}


def bench_exact(con, docs, nbytes, texts, size):
    def python_set():
        seen = set()
        for t in texts:
            seen.add(hashlib.sha1(" ".join(t.lower().split()).encode()).digest())

    q = "SELECT count(*) FROM sqltok_exact_duplicates('SELECT doc_id, text FROM docs')"
    return {"sqltok": _rate(_timed(lambda: con.execute(q).fetchall()), docs, nbytes),
            "python_sha1_set": _rate(_timed(python_set), len(texts), size)}


def bench_pipeline(con, docs, nbytes, texts, size):
    settings = PrepareSettings(clean=CleanSettings(form="NFC"), detect_language=True,
                               mask_pii=("credentials", "email", "iban", "card", "ip", "phone"),
                               dedup=Dedup.parse("near:0.8"), temperature=0.3, valid=0.01)
    with tempfile.TemporaryDirectory() as tmp:
        seconds = _timed(lambda: prepare(con, [Source(table="docs")], f"{tmp}/out", settings))
    return {"sqltok": _rate(seconds, docs, nbytes)}


def language_accuracy(paths: list[str], per_language: int) -> dict:
    """Accuracy per language of sqltok, py3langid and lingua on the first `per_language` documents of
    each labelled fixture corpus (`lang` field; `code` is not a language and is left out)."""
    import py3langid
    import pyarrow as pa
    from lingua import LanguageDetectorBuilder

    from sqltok.corpus.language import MACROLANGUAGE, language_arrays

    detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

    def lingua(t):
        found = detector.detect_language_of(t)
        return found.iso_code_639_1.name.lower() if found else None

    def langid(t):
        code = py3langid.classify(t)[0]
        return MACROLANGUAGE.get(code, code)

    out = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for _, line in zip(range(per_language), f)]
        lang = rows[0]["lang"]
        if lang == "code":
            continue
        texts = [r["text"] for r in rows]
        ours = language_arrays(pa.array(texts))[0].to_pylist()
        out[lang] = {"documents": len(texts),
                     "sqltok": sum(c == lang for c in ours) / len(texts),
                     "py3langid": sum(langid(t) == lang for t in texts) / len(texts),
                     "lingua": sum(lingua(t) == lang for t in texts) / len(texts)}
        print(f"accuracy  {lang:<4} {len(texts):>5} docs  sqltok {out[lang]['sqltok']:.3f}  "
              f"py3langid {out[lang]['py3langid']:.3f}  lingua {out[lang]['lingua']:.3f}")
    return out


TASKS = {"language": bench_language, "pii": bench_pii, "dedup": bench_dedup, "exact": bench_exact,
         "pipeline": bench_pipeline}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--en", default=str(SHARED / "bench" / "en100.parquet"))
    ap.add_argument("--corpora", nargs="*", default=sorted(glob.glob(str(SHARED / "fixtures" / "corpora" / "*.jsonl"))))
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--peer-mb", type=float, default=5.0)
    ap.add_argument("--tasks", nargs="+", choices=sorted(TASKS) + ["accuracy"], default=list(TASKS) + ["accuracy"])
    ap.add_argument("--accuracy-docs", type=int, default=300, help="documents per language for accuracy")
    args = ap.parse_args()
    results = {"sqltok": sqltok.__version__}
    if "accuracy" in args.tasks:
        results["accuracy"] = language_accuracy(args.corpora, args.accuracy_docs)
    for name, paths in (("en", [args.en]), ("multilingual", args.corpora)):
        con = duckdb.connect()
        sqltok.register(con)
        docs, nbytes = _load(con, paths, args.mb)
        texts, size = _peer_texts(con, args.peer_mb)
        print(f"== {name}: {docs:,} documents, {nbytes / 1e6:.1f} MB (peers: {len(texts):,} documents, "
              f"{size / 1e6:.1f} MB)")
        results[name] = {"documents": docs, "bytes": nbytes}
        for task in (t for t in args.tasks if t in TASKS):
            r = TASKS[task](con, docs, nbytes, texts, size)
            for who, rate in r.items():
                x = "" if who == "sqltok" else f"  x {r['sqltok']['mb_per_s'] / rate['mb_per_s']:.1f}"
                print(f"{task:<9} {who:<20} {rate['seconds']:>8.2f} s {rate['docs_per_s']:>10,.0f} docs/s "
                      f"{rate['mb_per_s']:>8.2f} MB/s{x}")
            results[name][task] = r
        con.close()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
