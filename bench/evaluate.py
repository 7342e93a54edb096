"""What judging costs beside encoding: the whole `sqltok_evaluate` metrics table for several
tokenizers against encoding the same corpus with the same tokenizers alone.

    python bench/evaluate.py ../shared/bench/en100.parquet --multi ../shared/fixtures/corpora/*.jsonl \
        [--tokenizers FILE ...] [--mb 100] [--rounds 3]

Both measurements run in SQL over the same DuckDB table of documents, one after the other in each
round (encoding first in odd rounds, evaluating first in even ones, so that neither always finds the
caches warm): "encoding" is `SELECT sum(len(encode(t, text)))` over every (tokenizer, document);
"evaluating" is `SELECT * FROM sqltok_evaluate(...)` grouped by `lang`. Printed per corpus: seconds
and CPU seconds (of the whole process, DuckDB's threads included) of each (median over rounds), the
median of the per-round ratios evaluating / encoding (target: at most 1.5) and the same ratio of CPU
seconds, which other work on a shared machine disturbs less. The peer, tokenization-scorer, computes
one metric (Rényi efficiency) in Python from the ids the encoding produced; its time is printed
beside sqltok's whole table for scale. The last line is one JSON object with every figure.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import duckdb
import tokenization_scorer

import sqltok
from sqltok.corpus.sources import quote_literal
from sqltok.judge.metrics import tokenizer_names

SHARED = Path(__file__).resolve().parents[2] / "shared"
TOKENIZERS = [SHARED / "fixtures/tokenizers/o200k_base/o200k_base.tiktoken",
              SHARED / "fixtures/tokenizers/cl100k_base/cl100k_base.tiktoken",
              SHARED / "fixtures/tokenizers/bert-base-uncased/tokenizer.json"]


def load_corpus(con, name: str, paths: list[str], mb: float) -> int:
    """Table `docs(text, lang)` with the first `mb` MB of `paths` (lang from the file if it has one,
    else the corpus name); returns its bytes."""
    con.execute("CREATE OR REPLACE TABLE docs (text VARCHAR, lang VARCHAR)")
    for path in paths:
        reader = "read_parquet" if path.endswith(".parquet") else "read_json"
        cols = [c[0] for c in con.execute(f"DESCRIBE SELECT * FROM {reader}({quote_literal(path)})").fetchall()]
        lang = "lang" if "lang" in cols else quote_literal(name)
        con.execute(f"""INSERT INTO docs SELECT text, {lang} FROM (
            SELECT text, {lang} AS lang, sum(strlen(text)) OVER (ROWS UNBOUNDED PRECEDING) AS upto
            FROM {reader}({quote_literal(path)})) WHERE upto <= {int(mb * 1e6 / len(paths))}""")
    return con.execute("SELECT sum(strlen(text)) FROM docs").fetchall()[0][0]


def timed(fn) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of the whole process, DuckDB's threads included, result of fn())."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def bench_corpus(con, names: list[str], rounds: int) -> dict:
    toks = "[" + ", ".join(quote_literal(n) for n in names) + "]"
    encode_sql = (f"SELECT sum(len(encode(t.tokenizer, d.text)))::BIGINT FROM docs AS d "
                  f"CROSS JOIN (SELECT unnest({toks}) AS tokenizer) AS t")
    eval_sql = f"""SELECT * FROM sqltok_evaluate({toks}, 'SELECT text, lang FROM docs', "by" := 'lang')"""
    run_encode = lambda: con.execute(encode_sql).fetchall()[0][0]  # noqa: E731
    run_eval = lambda: con.execute(eval_sql).fetchall()  # noqa: E731
    encode_s, eval_s, encode_cpu, eval_cpu, ratios, cpu_ratios = [], [], [], [], [], []
    for r in range(rounds):
        order = (run_encode, run_eval) if r % 2 == 0 else (run_eval, run_encode)
        results = {f: timed(f) for f in order}
        encode_s.append(results[run_encode][0])
        eval_s.append(results[run_eval][0])
        encode_cpu.append(results[run_encode][1])
        eval_cpu.append(results[run_eval][1])
        ratios.append(eval_s[-1] / encode_s[-1])
        cpu_ratios.append(eval_cpu[-1] / encode_cpu[-1])
        tokens = results[run_encode][2]
    ids = [" ".join(map(str, x)) for (x,) in con.execute(f"SELECT encode({quote_literal(names[0])}, text) FROM docs").fetchall()]
    peer_s, _, _ = timed(lambda: tokenization_scorer.score(ids, metric="renyi_efficiency", power=2.5))
    return {"tokens": tokens, "encode_s": statistics.median(encode_s), "evaluate_s": statistics.median(eval_s),
            "encode_cpu_s": statistics.median(encode_cpu), "evaluate_cpu_s": statistics.median(eval_cpu),
            "ratio": statistics.median(ratios), "ratios": ratios,
            "cpu_ratio": statistics.median(cpu_ratios), "cpu_ratios": cpu_ratios,
            "peer_tokenization_scorer_renyi_one_tokenizer_s": peer_s}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("en", help="English corpus (Parquet or JSONL with `text`)")
    p.add_argument("--multi", nargs="*", default=[], help="multilingual JSONL files (`text`, `lang`)")
    p.add_argument("--tokenizers", nargs="+", default=[str(t) for t in TOKENIZERS])
    p.add_argument("--mb", type=float, default=100.0, help="MB of each corpus (default 100)")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    con = duckdb.connect()
    sqltok.register(con)
    names = tokenizer_names(con, args.tokenizers)
    results = {}
    for corpus, paths in (("en", [args.en]), ("multi", args.multi)):
        if not paths:
            continue
        nbytes = load_corpus(con, corpus, paths, args.mb)
        res = bench_corpus(con, names, args.rounds)
        res["bytes"] = nbytes
        results[corpus] = res
        print(f"{corpus}: {nbytes / 1e6:.1f} MB, {len(names)} tokenizers ({', '.join(names)}): encoding "
              f"{res['encode_s']:.2f} s ({res['encode_cpu_s']:.2f} s CPU), the whole metrics table {res['evaluate_s']:.2f} s "
              f"({res['evaluate_cpu_s']:.2f} s CPU); evaluating / encoding = {res['ratio']:.2f} (target <= 1.5; rounds "
              f"{', '.join(f'{x:.2f}' for x in res['ratios'])}), in CPU time {res['cpu_ratio']:.2f}; "
              f"peer tokenization-scorer, Rényi only, {names[0]} only: {res['peer_tokenization_scorer_renyi_one_tokenizer_s']:.2f} s",
              file=sys.stderr)
    print(json.dumps({"tokenizers": names, "mb": args.mb, "rounds": args.rounds, "results": results}))


if __name__ == "__main__":
    main()
