"""The `sqltok` command: train, export, import, list and drop models in a DuckDB database file."""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from contextlib import nullcontext
from pathlib import Path
from importlib.resources import files

import duckdb

from . import __version__
from sqltok.cluster.commands import add_cluster_flags, cluster_of, encode_on_cluster, wants_cluster
from sqltok.corpus.commands import add_parser as add_prepare_parser
from sqltok.corpus.sources import Source
from sqltok.encode_files import encode_file
from sqltok.errors import SqltokError
from sqltok.interrupts import is_interrupt
from sqltok.evaluate import compression, holdout_split
from sqltok.named_tokenizers import named_tokenizers
from sqltok.judge.commands import add_commands
from sqltok.model_files import FORMATS, export_model, import_model
from sqltok.progress import QueryProgress
from sqltok.register import register
from sqltok.bpe.settings import DEFAULT_SPECIAL_TOKENS, check_special_tokens
from sqltok.store import drop_model, model_names, require_model
from sqltok.bpe.superword import train_superword
from sqltok.bpe.train import train_bpe
from sqltok.extend.extend import SPECIALS, extend_model
from sqltok.wordpiece.train import train_wordpiece
from sqltok.wordpiece.train_settings import WordPieceSettings
from sqltok.unigram.spec import UnigramSpec
from sqltok.unigram.train import train_unigram

#: The SentencePiece flags `sqltok train --method unigram` takes.
UNIGRAM_FLAGS = ("character_coverage", "seed_sentencepiece_size", "shrinking_factor", "num_sub_iterations",
                 "max_sentencepiece_length", "max_sentence_length", "split_by_whitespace", "split_by_unicode_script",
                 "split_by_number", "split_digits", "treat_whitespace_as_suffix", "byte_fallback",
                 "user_defined_symbols", "control_symbols", "normalization_rule_name", "add_dummy_prefix",
                 "remove_extra_whitespaces")

DEFAULT_DB = "sqltok.duckdb"


def sample_path() -> str:
    """The path of the real English sample corpus that ships with sqltok (JSONL, `text` key)."""
    return str(files("sqltok").joinpath("data/sample_en.jsonl.zst"))


def _source(args) -> Source:
    if sum(x is not None for x in (args.source, args.sql, args.table)) != 1:
        raise SqltokError("give one source: a file, --sql QUERY or --table NAME")
    mode = "line" if args.lines else "file" if args.whole_file else None
    return Source(path=args.source, sql=args.sql, table=args.table, text_key=args.text_key,
                  text_mode=mode, max_documents=args.max_documents)


def _show(token: bytes) -> str:
    """A token for people: its text quoted, bytes that are not UTF-8 as escapes."""
    return repr(bytes(token).decode("utf-8", "backslashreplace"))


#: Methods whose counting runs on a cluster (the others count in this process).
CLUSTER_METHODS = ("bpe", "boundless", "superbpe")


def _cmd_train(args) -> None:
    if wants_cluster(args) and args.method not in CLUSTER_METHODS:
        raise SqltokError(f"--workers/--cluster count for --method {', '.join(CLUSTER_METHODS)}; "
                          f"--method {args.method} counts in this process")
    if wants_cluster(args) and args.holdout:  # the split is a query of the documents, which shards cannot be
        raise SqltokError("--holdout splits the documents by a query, which a cluster cannot shard: split the "
                          "files first (sqltok prepare --valid writes train.parquet and valid.parquet) and train "
                          "on the training part")
    with duckdb.connect(args.db) as con, cluster_of(args) as cluster:
        _train(con, args, cluster)


def _train(con, args, cluster=None) -> None:
    register(con)
    reuse = args.phase1 is not None and args.source is None and args.sql is None and args.table is None
    if reuse and args.holdout:
        raise SqltokError("--holdout needs a source; --phase1 alone reuses stored counts")
    src = None if reuse else _source(args)
    held = None
    if args.holdout:
        src, held = holdout_split(src, args.holdout)
    specials = check_special_tokens(s for s in args.special_tokens.split(",") if s) \
        if args.special_tokens is not None else DEFAULT_SPECIAL_TOKENS
    if args.memory_limit:
        con.execute("SET memory_limit = ?", [args.memory_limit])
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    if not progress:  # nor DuckDB's own bar, which it prints on stdout for queries over 2 s
        con.execute("SET enable_progress_bar = false")
    given = [name for name in UNIGRAM_FLAGS if getattr(args, name) is not None]
    if given and args.method != "unigram":
        raise SqltokError(f"--{given[0].replace('_', '-')} is a flag of --method unigram, "
                          f"not of --method {args.method}")
    if args.method == "wordpiece":
        return _train_wordpiece(con, args, src, held, progress)
    if args.method == "unigram":
        return _train_unigram(con, src, held, args)
    if args.method == "bpe":
        _check_bpe_args(args)
        report = train_bpe(con, src, args.vocab_size, args.model, simple=args.simple,
                           special_tokens=specials, replace=args.replace, progress=progress, cluster=cluster)
        args.stored = report.model
        print(f"model {report.model!r} in {args.db}: {report.vocab_size} tokens, {report.merges} merges")
        print(f"documents: {report.documents} used, {report.null_documents} NULL and "
              f"{report.empty_documents} empty skipped; {report.bytes:,} bytes; "
              f"{report.unique_pretokens:,} unique pretokens")
    else:
        if held is not None and args.phase1 is not None:
            _require_phase1_without(con, args.phase1, src)
        report = train_superword(
            con, src, args.vocab_size, args.model, method=args.method, supermerges=_supermerges(args),
            greedy_split=args.greedy_split, simple=args.simple, special_tokens=specials, replace=args.replace,
            phase1=args.phase1, progress=progress, cluster=cluster)
        args.stored = report.model
        print(f"model {report.model!r} ({report.method}) in {args.db}: {report.vocab_size} tokens, "
              f"{report.regular_merges} regular merges, {report.supermerges} supermerges")
        print(f"documents: {report.documents}; {report.bytes:,} bytes; pretokens {report.unique_pretokens:,} "
              f"unique of {report.pretokens:,} (type-token ratio {report.pretoken_type_token_ratio:.4f}); "
              f"candidates {report.unique_candidates:,} unique of {report.candidates:,} "
              f"({report.candidate_type_token_ratio:.4f})"
              + ("" if report.pieces is None else
                 f"; greedy split: {report.unique_pieces:,} unique pieces of {report.pieces:,} "
                 f"({report.piece_type_token_ratio:.4f})"))
        if report.unique_candidates == 0:
            print("note: the corpus has no supermerge candidates (runs of two or more pretokens with letters); "
                  "BoundlessBPE stops when no supermerge pair is left, as the reference does")
    if report.vocab_size < args.vocab_size:
        # BoundlessBPE (and "match", which takes its r and s) ends at its last supermerge pair, regular
        # pairs left or not
        why = "no supermerge pair is left, where BoundlessBPE stops as the reference does" \
            if args.method == "boundless" or args.supermerges == "match" else "no pair is left to merge"
        print(f"note: the corpus gives only {report.vocab_size:,} tokens, not the {args.vocab_size:,} asked for "
              f"({why})")
    print("seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in report.seconds.items()))
    print("first merges:")
    for idx, left, right, count in con.execute(
            # idx < 10: the same first ten, without joining every merge to its tokens (0.24 -> 0.05 s)
            "SELECT idx, left_token, right_token, count FROM sqltok_merges(?) WHERE idx < 10 "
            "ORDER BY is_super, idx LIMIT 10",
            [report.model]).fetchall():
        print(f"  {idx:>4}  {_show(left):>12} + {_show(right):<12} {count:>12,}")
    if args.holdout:
        _print_compression(con, report.model, held, args.holdout)


def _require_phase1_without(con, phase1: str, src: Source) -> None:
    """`--phase1` with `--holdout`: the stored counts phase 2 reuses must be of the training side `src`
    (the phase-1 model trained with the same `--holdout` on the same source), or the held-back
    documents were counted and their compression is no holdout."""
    require_model(con, phase1)
    counted = con.execute("SELECT source FROM sqltok_store.models WHERE model = ?", [phase1]).fetchall()[0][0]
    if counted != src.describe():
        raise SqltokError(f"--phase1 {phase1} reuses the counts of {counted!r}, not of {src.describe()!r}: "
                          "they may hold the documents --holdout holds back, whose compression would then be "
                          f"no holdout; train {phase1!r} on the same source with the same --holdout, or leave "
                          "out --phase1")


def _train_wordpiece(con, args, src: Source, held: Source | None, progress: bool) -> None:
    """`--method wordpiece`: HF's WordPieceTrainer with BertWordPieceTokenizer.train's defaults."""
    _check_bpe_args(args)
    if args.simple:
        raise SqltokError("--simple is for the byte-level BPE methods; WordPiece splits words as BERT does")
    specials = {} if args.special_tokens is None else \
        {"special_tokens": tuple(s for s in args.special_tokens.split(",") if s)}
    settings = WordPieceSettings(
        min_frequency=args.min_frequency, limit_alphabet=None if args.limit_alphabet < 0 else args.limit_alphabet,
        initial_alphabet=tuple(args.initial_alphabet), lowercase=args.lowercase, strip_accents=args.strip_accents,
        **specials)
    report = train_wordpiece(con, src, args.vocab_size, args.model, settings=settings, replace=args.replace,
                             progress=progress)
    args.stored = report.model
    print(f"model {report.model!r} (wordpiece) in {args.db}: {report.vocab_size} tokens, {report.merges} merges")
    print(f"documents: {report.documents} used, {report.null_documents} NULL and {report.empty_documents} empty "
          f"skipped; {report.bytes:,} bytes; {report.unique_words:,} unique words of {report.words:,}")
    if report.vocab_size < args.vocab_size:
        print(f"note: the corpus gives only {report.vocab_size:,} tokens, not the {args.vocab_size:,} asked for "
              f"(no pair is left with a count of at least --min-frequency {args.min_frequency})")
    print("seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in report.seconds.items()))
    if held is not None:
        _print_compression(con, report.model, held, args.holdout)


def _add_wordpiece_args(t: argparse.ArgumentParser) -> None:
    w = t.add_argument_group("--method wordpiece (HF WordPieceTrainer; defaults: BertWordPieceTokenizer.train's)")
    w.add_argument("--min-frequency", type=int, default=2, help="the least count a merged pair needs (default 2)")
    w.add_argument("--limit-alphabet", type=int, default=1000,
                   help="keep at most this many characters, the most frequent (default 1000; -1: all)")
    w.add_argument("--initial-alphabet", default="", help="characters always in the alphabet (one string)")
    w.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True,
                   help="the BERT normalizer lowercases (default: yes)")
    w.add_argument("--strip-accents", action=argparse.BooleanOptionalAction, default=None,
                   help="the BERT normalizer strips accents (default: as --lowercase)")


def _print_compression(con, model: str, held: Source, fraction: float) -> None:
    c = compression(con, model, held)
    if not c["tokens"]:  # bytes per token would be nan
        print(f"held-back documents ({fraction:.0%}): none (the split held back no non-empty document)")
        return
    print(f"held-back documents ({fraction:.0%}): {c['documents']} documents, {c['bytes']:,} bytes, "
          f"{c['tokens']:,} tokens: {c['bytes_per_token']:.3f} bytes per token")


def _train_unigram(con, src: Source, held: Source | None, args) -> None:
    """`--method unigram`: SentencePiece's trainer with its flags; documents are read as lines."""
    _check_bpe_args(args)
    if args.simple:
        raise SqltokError("--simple is for the byte-level BPE methods; Unigram splits words as SentencePiece does")
    if args.special_tokens is not None:
        raise SqltokError("--special-tokens is not a flag of --method unigram: give SentencePiece's "
                          "--control-symbols or --user-defined-symbols")
    flags = {name: getattr(args, name) for name in UNIGRAM_FLAGS if getattr(args, name) is not None}
    for name in ("user_defined_symbols", "control_symbols"):
        if name in flags:
            flags[name] = tuple(s for s in flags[name].split(",") if s)
    report = train_unigram(con, src, args.model, UnigramSpec(vocab_size=args.vocab_size, **flags),
                           replace=args.replace)
    args.stored = report.model
    print(f"model {report.model!r} (unigram) in {args.db}: {report.vocab_size} pieces from {report.lines:,} lines "
          f"({report.sentences:,} distinct sentences, {report.words:,} distinct words, {report.seeds:,} seed pieces)")
    print("seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in report.seconds.items()))
    if held is not None:
        _print_compression(con, report.model, held, args.holdout)


def _add_unigram_flags(t: argparse.ArgumentParser) -> None:
    """SentencePiece's trainer flags for --method unigram (its names with dashes, its defaults)."""
    g = t.add_argument_group("unigram (SentencePiece's flags and defaults)")
    for name in UNIGRAM_FLAGS:
        default = UnigramSpec.__dataclass_fields__[name].default
        if isinstance(default, bool):
            g.add_argument("--" + name.replace("_", "-"), dest=name, action=argparse.BooleanOptionalAction,
                           default=None, help=f"default {default}")
        elif name in ("user_defined_symbols", "control_symbols"):
            g.add_argument("--" + name.replace("_", "-"), dest=name, metavar="A,B", help="comma-separated")
        else:
            g.add_argument("--" + name.replace("_", "-"), dest=name, type=type(default), default=None,
                           help=f"default {default}")


def _check_bpe_args(args) -> None:
    for flag, value in (("--supermerges", args.supermerges), ("--greedy-split", args.greedy_split),
                        ("--phase1", args.phase1)):
        if value:
            raise SqltokError(f"{flag} needs --method boundless or superbpe")


def _supermerges(args) -> int | str | None:
    if args.supermerges is None or args.supermerges == "match":
        return args.supermerges
    try:
        return int(args.supermerges)
    except ValueError:
        raise SqltokError(f"--supermerges takes a number or 'match', not {args.supermerges!r}") from None


def _cmd_extend(args) -> None:
    """Learn --add more merges on top of BASE and store the result as --model, with a regression report."""
    mode = "line" if args.lines else "file" if args.whole_file else None
    src = Source(path=args.on, text_key=args.text_key, text_mode=mode, max_documents=args.max_documents)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    with duckdb.connect(args.db) as con:
        r = extend_model(con, args.base, src, args.add, args.model, specials=args.specials, replace=args.replace,
                         progress=progress)
    g = r.regression
    print(f"model {r.model!r} in {args.db}: {r.base!r} with {r.merges} more merges, {r.new_tokens} new tokens; "
          f"ids 0..{r.n_vocab - 1}")
    for text, (old, new) in r.special_tokens.items():
        print(f"special token {text!r}: id {old}" + ("" if old == new else f" -> {new}"))
    print(f"old ids: {g.old_ids - g.old_ids_changed:,} of {g.old_ids:,} decode as before")
    print(f"new corpus: {g.documents:,} documents, {g.bytes:,} bytes; bytes per token {g.bytes_per_token_before:.3f} "
          f"-> {g.bytes_per_token_after:.3f} ({g.tokens_before:,} -> {g.tokens_after:,} tokens); "
          f"{g.texts_changed:,} texts encode differently")
    print("seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items()))


def _cmd_encode(args) -> None:
    """Encode a column into token ids (or counts): the columns of --keep-columns plus `ids` or `n_tokens`."""
    # a tokenizer file needs no database: opening one would refuse the file where a model has its name
    with duckdb.connect() if os.path.exists(args.model) else _read_only(args.db) as con:
        register(con)
        mode = "line" if args.lines else "file" if args.whole_file else None
        src = Source(path=args.input, text_key=args.text_key, text_mode=mode)
        progress = sys.stderr.isatty() if args.progress is None else args.progress
        if wants_cluster(args):
            return encode_on_cluster(con, args, src, progress)
        model = args.model
        if os.path.exists(model):
            model = named_tokenizers(con).load(Path(model).stem, model).name
        keep = tuple(c for c in (args.keep_columns or "").split(",") if c)
        with QueryProgress(con, "encoding") if progress else nullcontext():
            summary = encode_file(con, model, src, args.output, count=args.count,
                                  allow_special=args.allow_special, keep_columns=keep)
    print(f"wrote {summary.output}: {summary.rows} rows, {summary.tokens:,} tokens ({model})")


def _read_only(db: str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to `db` (so that reading never collides with a running training); a
    missing file is an error."""
    if not os.path.exists(db):
        raise SqltokError(f"no such database: {db}")
    return duckdb.connect(db, read_only=True)


def _cmd_export(args) -> None:
    with _read_only(args.db) as con, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        export_model(con, args.model, args.output, format=args.format, lossy=args.lossy)
    for w in caught:
        print(f"sqltok: warning: {w.message}", file=sys.stderr)
    print(f"wrote {args.output}")


def _cmd_import(args) -> None:
    with duckdb.connect(args.db) as con:
        import_model(con, args.path, args.model, replace=args.replace)
    print(f"imported {args.path} as {args.model!r} into {args.db}")


def _cmd_models(args) -> None:
    with _read_only(args.db) as con:
        rows = con.execute("SELECT model, method, vocab_size, script_aware, documents, source "
                           "FROM sqltok_store.models ORDER BY model").fetchall() if model_names(con) else []
    for row in rows:
        print("\t".join("" if x is None else str(x) for x in row))


def _cmd_drop(args) -> None:
    if not os.path.exists(args.db):  # connecting would create it, schema and all, to drop nothing
        raise SqltokError(f"no such database: {args.db}")
    with duckdb.connect(args.db) as con:
        drop_model(con, args.model)
    print(f"dropped {args.model!r}")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sqltok", description=__doc__)
    p.add_argument("--version", action="version", version=f"sqltok {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def db(sp):
        sp.add_argument("--db", default=DEFAULT_DB, help=f"DuckDB database file (default: ./{DEFAULT_DB})")

    t = sub.add_parser("train", help="train a byte-level BPE, BoundlessBPE, SuperBPE or WordPiece model")
    t.add_argument("source", nargs="?", help="Parquet, JSONL (.gz/.zst) or text file(s); globs allowed")
    t.add_argument("--sql", help="a SQL query whose column `text` (see --text-key) holds the documents")
    t.add_argument("--table", help="an existing table or view")
    t.add_argument("--text-key", default="text", help="JSON key or column holding the text (default: text)")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--lines", action="store_true", help="plain text: one document per line")
    g.add_argument("--whole-file", action="store_true", help="plain text: one document per file")
    t.add_argument("--max-documents", type=int, help="use only the first N documents")
    t.add_argument("--vocab-size", type=int, required=True)
    t.add_argument("--model", required=True, help="the model's name in the database")
    t.add_argument("--method", choices=("bpe", "boundless", "superbpe", "wordpiece", "unigram"), default="bpe",
                   help="bpe (default), a superword method: boundless (BoundlessBPE) or superbpe, wordpiece "
                   "(HF's WordPieceTrainer) or unigram (SentencePiece's Unigram trainer)")
    t.add_argument("--supermerges", help="superbpe: how many supermerges, or 'match' (as many as BoundlessBPE "
                   "finds, from the same phase-1 run)")
    t.add_argument("--greedy-split", action="store_true",
                   help="split candidates into frequent pretoken n-grams first (paper Appendix B)")
    t.add_argument("--phase1", metavar="MODEL",
                   help="reuse the pretoken and candidate counts of this stored superword model (same corpus) "
                   "instead of reading the corpus (with --holdout, MODEL trained with the same --holdout)")
    t.add_argument("--simple", action="store_true", help="no script splitting (GPT-4o pattern only)")
    t.add_argument("--special-tokens", help="comma-separated (default: <|endoftext|>; wordpiece: "
                   "[PAD],[UNK],[CLS],[SEP],[MASK]; '' for none)")
    t.add_argument("--holdout", type=float, default=0.0,
                   help="hold back this fraction of documents and report compression on them")
    t.add_argument("--replace", action="store_true", help="overwrite a model of the same name")
    t.add_argument("--memory-limit", help="DuckDB's memory limit, e.g. 2GB (it spills to disk beyond it; "
                   "default: DuckDB's, 80%% of RAM)")
    t.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    _add_wordpiece_args(t)
    _add_unigram_flags(t)
    add_cluster_flags(t)
    db(t)
    t.set_defaults(func=_cmd_train)

    x = sub.add_parser("extend", help="learn more merges on top of a byte-level BPE model, its ids kept")
    x.add_argument("base", help="a model in the database, a reference .model file, an HF byte-level BPE "
                   "tokenizer.json or a .tiktoken file (GPT-4o pattern)")
    x.add_argument("--on", required=True, metavar="SOURCE", help="the new corpus: Parquet, JSONL or text file(s)")
    x.add_argument("--add", type=int, required=True, help="how many merges to learn")
    x.add_argument("--model", required=True, help="the extended model's name in the database")
    x.add_argument("--specials", choices=SPECIALS, default="move",
                   help="the special tokens: move after the new tokens, in their order (default), or keep their "
                   "ids (when no new token needs one)")
    x.add_argument("--text-key", default="text")
    g = x.add_mutually_exclusive_group()
    g.add_argument("--lines", action="store_true", help="plain text: one document per line")
    g.add_argument("--whole-file", action="store_true", help="plain text: one document per file")
    x.add_argument("--max-documents", type=int, help="use only the first N documents")
    x.add_argument("--replace", action="store_true", help="overwrite a model of the same name")
    x.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    db(x)
    x.set_defaults(func=_cmd_extend)

    c = sub.add_parser("encode", help="encode a text column into token ids (or count tokens)")
    c.add_argument("--model", required=True,
                   help="a model in the database, or a tokenizer file (.tiktoken, tokenizer.json, .model)")
    c.add_argument("--input", required=True, help="Parquet, JSONL or text file (--lines)")
    c.add_argument("--output", required=True, help="Parquet or JSONL file to write (.jsonl.gz, .jsonl.zst too); "
                   "with --workers/--cluster a folder, one Parquet per shard")
    c.add_argument("--text-key", default="text")
    c.add_argument("--keep-columns", metavar="A,B", help="input columns to write before the ids ('*': all; "
                   "default: none)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--lines", action="store_true", help="plain text input: one document per line")
    g.add_argument("--whole-file", action="store_true", help="plain text input: one document per file")
    c.add_argument("--count", action="store_true", help="write token counts instead of ids")
    c.add_argument("--allow-special", action="store_true", help="match special tokens in the text")
    c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    add_cluster_flags(c)
    db(c)
    c.set_defaults(func=_cmd_encode)

    e = sub.add_parser("export", help="write a model to a file")
    e.add_argument("model")
    e.add_argument("--format", choices=FORMATS, default="reference")
    e.add_argument("-o", "--output", required=True)
    e.add_argument("--lossy", action="store_true", help="hf: write what HF can express, with a warning")
    db(e)
    e.set_defaults(func=_cmd_export)

    i = sub.add_parser("import", help="read a reference .model file into the database")
    i.add_argument("path")
    i.add_argument("--model", required=True)
    i.add_argument("--replace", action="store_true")
    db(i)
    i.set_defaults(func=_cmd_import)

    m = sub.add_parser("models", help="list the models in the database")
    db(m)
    m.set_defaults(func=_cmd_models)

    d = sub.add_parser("drop", help="remove a model from the database")
    d.add_argument("model")
    db(d)
    d.set_defaults(func=_cmd_drop)

    add_prepare_parser(sub)
    s = sub.add_parser("sample", help="print the path of the bundled sample corpus")
    s.set_defaults(func=lambda args: print(sample_path()))
    add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.func(args)
    except BrokenPipeError:  # `sqltok ... | head`: what was asked for is done; the reader left early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return _interrupted(getattr(args, "stored", None))
    except (SqltokError, duckdb.Error, OSError, RuntimeError) as e:
        if is_interrupt(e):
            return _interrupted(getattr(args, "stored", None))
        print(f"sqltok: error: {e}", file=sys.stderr)
        return 2
    return 0


def _interrupted(stored: str | None = None) -> int:
    """Exit 130; `stored`: the model a training run had written before the interrupt (while it
    reported on it: first merges, held-back compression), which the database keeps."""
    if stored is not None:
        print(f"sqltok: interrupted after model {stored!r} was stored; it is in the database", file=sys.stderr)
    else:
        print("sqltok: interrupted; the database is as it was", file=sys.stderr)
    return 130


if __name__ == "__main__":
    sys.exit(main())
