"""`sqltok prepare`: the preparation steps from the command line (`prepare.py` does the work)."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

import duckdb

from sqltok.corpus.balance import parse_ratios
from sqltok.corpus.clean import FORMS, CleanSettings
from sqltok.corpus.manifest import Manifest
from sqltok.corpus.pii import KINDS, check_kinds
from sqltok.corpus.prepare import Dedup, PrepareSettings, prepare
from sqltok.corpus.sources import Source, rows_format
from sqltok.errors import SqltokError


def add_parser(sub) -> None:
    """The `prepare` subcommand on the `sqltok` parser's subparsers."""
    p = sub.add_parser("prepare", help="prepare a training corpus: clean, detect languages, mask PII, "
                       "deduplicate, balance, split")
    p.add_argument("sources", nargs="+", help="Parquet, JSONL (.gz/.zst) or text files; globs allowed")
    p.add_argument("-o", "--output", required=True, help="folder for train.parquet, valid.parquet, manifest.json")
    p.add_argument("--text-key", default="text", help="JSON key or column holding the text (default: text)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--lines", action="store_true", help="plain text: one document per line")
    g.add_argument("--whole-file", action="store_true", help="plain text: one document per file")
    p.add_argument("--detect-language", action="store_true", help="add (or replace) a lang column")
    p.add_argument("--mask-pii", nargs="?", const=",".join(KINDS), metavar="KINDS",
                   help=f"mask PII (default all kinds: {','.join(KINDS)})")
    p.add_argument("--placeholder", action="append", default=[], metavar="KIND=TEXT",
                   help="the text that replaces PII of KIND (repeatable), e.g. email=<email>")
    p.add_argument("--dedup", metavar="MODE", help="exact, near:THRESHOLD (exact too) e.g. near:0.8")
    b = p.add_mutually_exclusive_group()
    b.add_argument("--balance", metavar="RATIOS", help="target ratios by language, e.g. zh=4,en=4,fr=1,ko=1")
    b.add_argument("--uniform", action="store_true", help="balance to equal shares of every language")
    b.add_argument("--temperature", type=float, metavar="ALPHA", help="balance to p(lang) ∝ n^ALPHA")
    p.add_argument("--normalize", choices=FORMS, help="Unicode normal form")
    p.add_argument("--invalid-utf8", choices=("fix", "drop"), default="fix",
                   help="BLOB text that is not UTF-8: fix with U+FFFD (default) or drop the document")
    p.add_argument("--min-chars", type=int, default=1, help="drop shorter documents (default: 1)")
    p.add_argument("--max-chars", type=int, default=2**31 - 1, help="drop longer documents")
    p.add_argument("--valid", type=float, metavar="FRACTION", help="hold back this fraction as valid.parquet")
    p.add_argument("--seed", type=int, default=0, help="seed of resampling and MinHash (default: 0)")
    p.add_argument("--memory-limit", help="DuckDB's memory limit, e.g. 2GB (it spills to disk beyond it)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    p.set_defaults(func=run)


def _placeholders(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        kind, sep, text = item.partition("=")
        if not sep:
            raise SqltokError(f"bad --placeholder {item!r}: expected KIND=TEXT, e.g. email=<email>")
        out[kind.strip()] = text
    check_kinds(out)
    return out


def settings_from(args) -> PrepareSettings:
    """The settings a command line asks for."""
    kinds = tuple(k.strip() for k in args.mask_pii.split(",") if k.strip()) if args.mask_pii else ()
    return PrepareSettings(
        clean=CleanSettings(args.invalid_utf8, args.normalize, args.min_chars, args.max_chars),
        detect_language=args.detect_language, mask_pii=kinds, placeholders=_placeholders(args.placeholder),
        dedup=Dedup.parse(args.dedup) if args.dedup else None,
        ratios=parse_ratios(args.balance) if args.balance else None, temperature=args.temperature,
        uniform=args.uniform, valid=args.valid, seed=args.seed)


def run(args) -> None:
    settings = settings_from(args)
    mode = "line" if args.lines else "file" if args.whole_file else None
    text = [s for s in args.sources if not rows_format(s)]  # --lines, --whole-file: for these (refused if none)
    sources = [Source(path=s, text_key=args.text_key, text_mode=mode if s in text or not text else None)
               for s in args.sources]
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    spill_dir = os.path.dirname(os.path.abspath(args.output))
    while not os.path.isdir(spill_dir):  # the output's folders are made by prepare, and unmade if it fails
        spill_dir = os.path.dirname(spill_dir)
    with tempfile.TemporaryDirectory(prefix=".sqltok-spill-", dir=spill_dir) as spill, duckdb.connect() as con, \
            warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *a, **k: print(f"sqltok: warning: {message}", file=sys.stderr)
        con.execute("SET temp_directory = ?", [spill])
        if args.memory_limit:
            con.execute("SET memory_limit = ?", [args.memory_limit])
        manifest = prepare(con, sources, args.output, settings, show_progress=progress)
    _report(manifest, args.output)


def _report(m: Manifest, out: str) -> None:
    print(f"{'step':<16}{'documents':>12}{'bytes':>16}")
    for s in m.steps:
        print(f"{s['step']:<16}{s['documents_out']:>12,}{s['bytes_out']:>16,}")
    if m.pii is not None:
        print("PII masked: " + ", ".join(f"{k} {n:,}" for k, n in m.pii.items()))
    removed = m.duplicates_removed()
    if removed:
        print("duplicates removed: " + ", ".join(f"{k} {n:,}" for k, n in removed.items()))
    if m.balance is not None:
        print(f"{'lang':<8}{'asked':>8}{'reached':>9}")
        for lang, share in m.balance["asked"].items():
            print(f"{lang:<8}{share:>8.1%}{m.balance['reached'].get(lang, 0.0):>9.1%}")
    for name, o in m.outputs.items():
        print(f"{os.path.join(out, o['file'])}: {o['documents']:,} documents, {o['bytes']:,} bytes")
