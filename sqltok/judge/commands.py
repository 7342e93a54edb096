"""`sqltok evaluate`, `sqltok report` and `sqltok view`: judging tokenizers from the command line.

A TOKENIZER is a model stored in the database (`--db`) or a tokenizer file; the corpus is a file
(`--on`), a table (`--table`) or a query (`--sql`), as for `sqltok train`.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
from typing import Iterator

import duckdb

from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.judge.formatting import format_table
from sqltok.judge.metrics import documents_query, evaluate, records
from sqltok.judge.report import write_report
from sqltok.judge.viewer import MAX_BYTES, view_html

DEFAULT_DB = "sqltok.duckdb"  # the database `sqltok train` writes when given no --db


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


def _cmd_evaluate(args) -> None:
    with connect(args.db) as con:
        rows = records(evaluate(con, args.tokenizers, corpus(args), by=args.by, alpha=args.alpha,
                                reference=args.reference))
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print(format_table(rows))


def _cmd_report(args) -> None:
    with connect(args.db) as con:
        index = write_report(con, args.tokenizers, corpus(args), args.output, by=args.by, alpha=args.alpha,
                             reference=args.reference)
    print(f"wrote {index} (plots as PNG and SVG, tables as CSV and Parquet beside it)")


def _view_texts(con, args) -> list[str]:
    texts = list(args.text or [])
    for path in args.file or []:
        try:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
        except UnicodeDecodeError as e:
            raise SqltokError(f"--file {path}: not UTF-8 text ({e})") from None
    if any(x is not None for x in (args.on, args.sql, args.table)):
        src = corpus(args)
        rows = con.execute(f"SELECT text FROM ({documents_query(con, src)}) WHERE text IS NOT NULL LIMIT ?",
                           [args.limit]).fetchall()
        if not rows:
            raise SqltokError(f"the corpus {src.describe()!r} has no documents (no non-NULL text)")
        texts += [t for (t,) in rows]
    if not texts:
        raise SqltokError("nothing to show: give --text TEXT, --file FILE or a corpus (--on, --sql, --table)")
    return texts


def _cmd_view(args) -> None:
    if not args.output.endswith((".html", ".htm")):
        raise SqltokError(f"the viewer writes an HTML page: -o must end in .html, not {args.output!r}")
    for flag, value in (("--limit", args.limit), ("--max-bytes", args.max_bytes)):
        if value < 1:
            raise SqltokError(f"{flag} must be a positive number, not {value}")
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
    e.add_argument("--json", action="store_true", help="one JSON object per line per (tokenizer, group); "
                   "the row over all groups has group null")
    e.set_defaults(func=_cmd_evaluate)

    r = sub.add_parser("report", help="write a folder with index.html, plots and tables comparing tokenizers")
    _metric_flags(r)
    r.add_argument("-o", "--output", required=True, help="the folder to write (created if needed)")
    r.set_defaults(func=_cmd_report)

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
