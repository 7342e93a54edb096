"""`sqltok evaluate`, `sqltok report` and `sqltok view`: judging tokenizers from the command line.

A TOKENIZER is a model stored in the database (`--db`) or a tokenizer file; the corpus is a file
(`--on`), a table (`--table`) or a query (`--sql`), as for `sqltok train`.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
from typing import Iterator

import duckdb

from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.judge.metrics import evaluate, records
from sqltok.judge.viewer import MAX_BYTES, view_html

DEFAULT_DB = "sqltok.duckdb"
#: The columns `sqltok evaluate` shows in the terminal (the JSON lines carry every column).
SHOWN = (("tokenizer", "tokenizer"), ("group", "group"), ("documents", "docs"), ("bytes", "bytes"),
         ("tokens", "tokens"), ("bytes_per_token", "bytes/tok"), ("characters_per_token", "chars/tok"),
         ("fertility", "tok/word"), ("split_word_share", "split"), ("tokens_per_document_p50", "doc p50"),
         ("tokens_per_document_p95", "doc p95"), ("tokens_per_document_max", "doc max"),
         ("vocab_utilization", "vocab use"), ("shannon_efficiency", "shannon"), ("renyi_efficiency", "renyi"),
         ("premium", "premium"))


@contextlib.contextmanager
def connect(db: str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The database named by --db (it must exist), else ./sqltok.duckdb when there is one, else an
    in-memory database (tokenizer files only)."""
    if db is not None and not os.path.exists(db):
        raise SqltokError(f"no such database: {db}")
    path = db or (DEFAULT_DB if os.path.exists(DEFAULT_DB) else ":memory:")
    with duckdb.connect(path) as con:
        yield con


def corpus(args) -> Source:
    """The source the --on / --table / --sql flags name."""
    if sum(x is not None for x in (args.on, args.sql, args.table)) != 1:
        raise SqltokError("give one corpus: --on FILE, --sql QUERY or --table NAME")
    return Source(path=args.on, sql=args.sql, table=args.table, text_key=args.text_key,
                  text_mode="line" if args.lines else None, max_documents=args.max_documents)


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def format_table(rows: list[dict]) -> str:
    """The metrics as an aligned text table; the over-all-groups row of a tokenizer says `(all)`."""
    cells = [[label for _, label in SHOWN]]
    for row in rows:
        cells.append([("(all)" if row["group"] is None else row["group"]) if key == "group" else _cell(row[key])
                      for key, _ in SHOWN])
    widths = [max(len(r[i]) for r in cells) for i in range(len(SHOWN))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in cells]
    notes = sorted({f"{r['tokenizer']} / {r['group']}: {r['note']}" for r in rows if "note" in r})
    return "\n".join(lines + notes)


def _cmd_evaluate(args) -> None:
    with connect(args.db) as con:
        rows = records(evaluate(con, args.tokenizers, corpus(args), by=args.by, alpha=args.alpha,
                                reference=args.reference))
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print(format_table(rows))


def _view_texts(con, args) -> list[str]:
    texts = list(args.text or [])
    for path in args.file or []:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    if any(x is not None for x in (args.on, args.sql, args.table)):
        q = corpus(args).query()
        texts += [t for (t,) in con.execute(f"SELECT text FROM ({q}) WHERE text IS NOT NULL LIMIT ?",
                                            [args.limit]).fetchall()]
    if not texts:
        raise SqltokError("nothing to show: give --text TEXT, --file FILE or a corpus (--on, --sql, --table)")
    return texts


def _cmd_view(args) -> None:
    if not args.output.endswith((".html", ".htm")):
        raise SqltokError(f"the viewer writes an HTML page: -o must end in .html, not {args.output!r}")
    with connect(args.db) as con:
        texts = _view_texts(con, args)
        page = view_html(con, args.tokenizers, texts, max_bytes=args.max_bytes)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"wrote {args.output}: {len(texts)} text(s) x {len(args.tokenizers)} tokenizer(s)")


def _corpus_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--on", metavar="FILE", help="Parquet, JSONL (.gz/.zst) or text file(s) (--lines); globs allowed")
    p.add_argument("--sql", help="a SQL query whose column `text` (see --text-key) holds the documents")
    p.add_argument("--table", help="an existing table or view")
    p.add_argument("--text-key", default="text", help="JSON key or column holding the text (default: text)")
    p.add_argument("--lines", action="store_true", help="plain text: one document per line")
    p.add_argument("--max-documents", type=int, help="use only the first N documents")
    p.add_argument("--db", help="DuckDB database with stored models (default: ./sqltok.duckdb if it exists)")


def _metric_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("tokenizers", nargs="+", metavar="TOKENIZER", help="stored model names or tokenizer files")
    _corpus_flags(p)
    p.add_argument("--by", metavar="COLUMN", help="group by this column (default: dominant Unicode script)")
    p.add_argument("--alpha", type=float, default=2.5, help="order of the Rényi entropy (default 2.5)")
    p.add_argument("--reference", metavar="GROUP", help="the group the tokenization premium is relative to")


def add_commands(sub) -> None:
    """Add `evaluate`, `report` and `view` to the `sqltok` command's subparsers."""
    e = sub.add_parser("evaluate", help="compare tokenizers over a corpus: compression, fertility, efficiency")
    _metric_flags(e)
    e.add_argument("--json", action="store_true", help="one JSON object per line per (tokenizer, group)")
    e.set_defaults(func=_cmd_evaluate)

    v = sub.add_parser("view", help="write an HTML page showing texts as each tokenizer splits them")
    v.add_argument("tokenizers", nargs="+", metavar="TOKENIZER", help="stored model names or tokenizer files")
    v.add_argument("--text", action="append", help="a text to show (repeatable)")
    v.add_argument("--file", action="append", help="a UTF-8 file shown as one text (repeatable)")
    _corpus_flags(v)
    v.add_argument("--limit", type=int, default=10, help="corpus: show the first N documents (default 10)")
    v.add_argument("--max-bytes", type=int, default=MAX_BYTES,
                   help=f"show at most this many bytes of each text (default {MAX_BYTES:,})")
    v.add_argument("-o", "--output", required=True, help="the HTML file to write")
    v.set_defaults(func=_cmd_view)
