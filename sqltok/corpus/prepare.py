"""`prepare`: the preparation steps over a whole corpus in DuckDB, each step a table built from the one
before (DuckDB streams and spills; the corpus need not fit in memory), written as Parquet with a
manifest of what each step did.

The order is the seed's (measure languages, clean and mask, split), with the filters before the
resampling so that the shares reached are the ones asked for: clean (decode, control characters,
normal form, lengths) → detect language → mask PII → deduplicate (exact, then near) → balance →
split. The output is built in a sibling folder and renamed into place when complete: a failed run
leaves nothing half-written.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field

import duckdb

from sqltok.corpus.balance import balance_query, language_shares, target_shares
from sqltok.corpus.clean import CleanSettings, clean_query, invalid_utf8_count
from sqltok.corpus.columns import TEXT_KEY_HINT, typed_rows_query
from sqltok.corpus.manifest import Manifest
from sqltok.corpus.pii import KINDS, PLACEHOLDERS, check_kinds
from sqltok.corpus.sources import Source, quote_ident, quote_literal
from sqltok.corpus.split import split_query
from sqltok.errors import SqltokError
from sqltok.interrupts import interruptible
from sqltok.progress import Progress
from sqltok.register import register
from sqltok.sql_files import sql_text


@dataclass(frozen=True)
class Dedup:
    """`exact` and/or near-duplicate removal at Jaccard `near` (None: no near dedup)."""

    exact: bool = True
    near: float | None = None

    @classmethod
    def parse(cls, spec: str) -> "Dedup":
        """'exact', 'near:0.8' or 'exact,near:0.8' ('near:T' implies exact removal too)."""
        exact, near = False, None
        for part in spec.split(","):
            kind, _, value = part.strip().partition(":")
            if kind == "exact" and not value:
                exact = True
            elif kind == "near":
                try:
                    near = float(value or 0.8)
                except ValueError:
                    raise SqltokError(f"bad near-duplicate threshold {value!r}: expected e.g. near:0.8") from None
                if not 0.0 < near < 1.0:
                    raise SqltokError(f"the near-duplicate threshold must be between 0 and 1, not {near}")
                exact = True
            else:
                raise SqltokError(f"unknown dedup mode {part!r}: expected exact, near:THRESHOLD or both")
        return cls(exact, near)


@dataclass(frozen=True)
class PrepareSettings:
    """What `prepare` does; every step is off unless asked for (cleaning of NULL/empty rows always)."""

    clean: CleanSettings = field(default_factory=CleanSettings)
    detect_language: bool = False
    mask_pii: tuple[str, ...] = ()
    placeholders: dict[str, str] = field(default_factory=dict)
    dedup: Dedup | None = None
    ratios: dict[str, float] | None = None
    temperature: float | None = None
    uniform: bool = False
    valid: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        check_kinds(self.mask_pii)
        check_kinds(self.placeholders)
        balancing = sum(x is not None and x is not False for x in (self.ratios, self.temperature, self.uniform))
        if balancing > 1:
            raise SqltokError("balance by target ratios, by temperature or uniformly: one of them")
        if self.valid is not None and not 0.0 < self.valid < 1.0:
            raise SqltokError(f"the validation fraction must be between 0 and 1, not {self.valid}")

    @property
    def balancing(self) -> bool:
        return self.ratios is not None or self.temperature is not None or self.uniform


SCHEMA = "sqltok_prepare"
MAX_SOURCES = 1000  # sources (and licenses) listed one by one in the manifest


class _Run:
    """One run's step tables (sqltok_prepare.step0, step1, ...: a schema of its own, dropped whole at
    the end) on the work connection, and the manifest."""

    def __init__(self, con: duckdb.DuckDBPyConnection, manifest: Manifest, progress: Progress | None) -> None:
        try:
            con.execute(f"CREATE SCHEMA {SCHEMA}")
        except duckdb.CatalogException:
            raise SqltokError(f"the database has a schema {SCHEMA} already: another prepare run is using this "
                              f"connection, or one was killed (DROP SCHEMA {SCHEMA} CASCADE)") from None
        self.con, self.manifest, self.progress = con, manifest, progress
        self.current, self.steps = "", 0
        self.last: tuple[int, int] | None = None  # documents and bytes of the current table

    @property
    def prev(self) -> str:
        """A query of the current step's rows."""
        return f"SELECT * FROM {self.current}"

    def step(self, name: str, query: str, **facts) -> None:
        """Build the next step table from `query` (dropping the one before: only one lives at a time
        beside the one being built) and record its documents and bytes."""
        table = f"{SCHEMA}.step{self.steps}"
        self.con.execute(f"CREATE TABLE {table} AS {query}")
        if self.current:
            self.con.execute(f"DROP TABLE {self.current}")
        before, self.last = self.last, self.counts(table)
        self.current, self.steps = table, self.steps + 1
        self.manifest.add_step(name, before, self.last, **facts)
        if self.progress:
            self.progress.update(self.steps)

    def counts(self, table: str) -> tuple[int, int]:
        """Documents and bytes (NULL and empty documents count until the cleaning step drops them)."""
        kind = dict(self.con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall())["text"]
        size = "octet_length(text)" if kind == "BLOB" else "strlen(text)"
        return self.con.execute(f"SELECT count(*), coalesce(sum({size}), 0) FROM {table}").fetchone()

    def columns(self) -> list[str]:
        return [r[0] for r in self.con.execute(f"DESCRIBE {self.current}").fetchall()]

    def drop(self) -> None:
        self.con.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


@interruptible
def prepare(con: duckdb.DuckDBPyConnection, sources: list[Source], out_dir: str, settings: PrepareSettings,
            show_progress: bool = False) -> Manifest:
    """Run the steps of `settings` over the documents of `sources` and write `out_dir`/train.parquet
    (and valid.parquet with `valid`) and manifest.json. `out_dir` must not exist or be empty."""
    register(con)
    if show_progress:
        con.execute("SET enable_progress_bar = false")  # one bar: ours, by step
    if os.path.isdir(out_dir) and os.listdir(out_dir):
        raise SqltokError(f"{out_dir} exists and is not empty: choose another output folder or empty it")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise SqltokError(f"{out_dir} exists and is not a folder: choose another output folder")
    parent = os.path.dirname(os.path.abspath(out_dir)) or "."
    manifest = Manifest.start(settings, [s.describe() for s in sources])
    progress = Progress("prepare", _step_count(settings), "steps") if show_progress else None
    run = _Run(con, manifest, progress)
    tmp, made = None, []
    try:
        made = make_parents(parent)
        tmp = tempfile.mkdtemp(prefix=".sqltok-prepare-", dir=parent)  # in the try: a folder that cannot be
        # written must not leave the run's schema behind, which would refuse every later run on `con`
        _run_steps(run, sources, settings)
        outputs = {"train": run.current}
        if settings.valid is not None:
            by_language = "lang" in run.columns()
            outputs = {"train": f"({split_query(run.prev, settings.valid, False, by_language)})",
                       "valid": f"({split_query(run.prev, settings.valid, True, by_language)})"}
        for name, q in outputs.items():
            path = os.path.join(tmp, f"{name}.parquet")
            con.execute(f"COPY (SELECT * FROM {q}) TO {quote_literal(path)} (FORMAT parquet)")
            manifest.add_output(name, *con.execute(
                f"SELECT count(*), coalesce(sum(strlen(text)), 0) FROM read_parquet({quote_literal(path)})").fetchone())
        manifest.sources = _source_counts(con, run)
        manifest.write(os.path.join(tmp, "manifest.json"))
        if os.path.isdir(out_dir):
            os.rmdir(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        remove_empty(made)
        raise
    finally:
        run.drop()
        if progress:
            progress.close()
    return manifest


def make_parents(folder: str) -> list[str]:
    """Make `folder` and the missing folders above it; returns the ones made, deepest first."""
    made, f = [], folder
    while not os.path.isdir(f) and f != os.path.dirname(f):
        made.append(f)
        f = os.path.dirname(f)
    os.makedirs(folder, exist_ok=True)
    return made


def remove_empty(folders: list[str]) -> None:
    """Remove `folders` (deepest first) while they are empty: what a failed run made, it unmakes."""
    for f in folders:
        try:
            os.rmdir(f)
        except OSError:
            return


def _source_counts(con: duckdb.DuckDBPyConnection, run: _Run) -> list[dict] | None:
    """Documents and bytes per source and license of the output, when the input names them: the
    `MAX_SOURCES` largest, and one row for all the others."""
    keys = [c for c in ("source", "license") if c in run.columns()]
    if not keys:
        return None
    cols = ", ".join(keys)
    rows = con.execute(f"SELECT {cols}, count(*) AS d, sum(strlen(text)) AS b FROM {run.current} GROUP BY ALL "
                       f"ORDER BY d DESC, {cols}").fetchall()
    out = [dict(zip(keys + ["documents", "bytes"], r)) for r in rows[:MAX_SOURCES]]
    if len(rows) > MAX_SOURCES:
        rest = rows[MAX_SOURCES:]
        out.append({"others": len(rest), "documents": sum(r[-2] for r in rest), "bytes": sum(r[-1] for r in rest)})
    return out


def _step_count(s: PrepareSettings) -> int:
    return (2 + s.detect_language + bool(s.mask_pii) + (s.dedup is not None and s.dedup.exact)
            + (s.dedup is not None and s.dedup.near is not None) + s.balancing)


def _source_query(con: duckdb.DuckDBPyConnection, sources: list[Source]) -> str:
    """All sources one after another, every column kept, the text column named `text`."""
    def one(s: Source) -> str:
        rows = typed_rows_query(con, s)
        if s.text_key == "text":
            return f"SELECT * FROM ({rows})"
        if "text" in [r[0] for r in con.execute(f"DESCRIBE {rows}").fetchall()]:
            # it would stay beside the documents as the steps' `text`, and the documents (text_1) go unprocessed
            raise SqltokError(f"{s.describe()} has a column 'text' besides the text key {s.text_key!r}: rename "
                              f"or drop that column")
        key = quote_ident(s.text_key)
        return f"SELECT * EXCLUDE ({key}), {key} AS text FROM ({rows})"

    return " UNION ALL BY NAME ".join(one(s) for s in sources)


def _run_steps(run: _Run, sources: list[Source], s: PrepareSettings) -> None:
    con = run.con
    union = _source_query(con, sources)
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {union})").fetchall())
    cols = list(types)
    if "text" not in cols:
        raise SqltokError(f"the input has no column 'text' {TEXT_KEY_HINT}; its columns: {', '.join(cols)}")
    if types["text"] not in ("VARCHAR", "BLOB", '"NULL"'):  # else DuckDB's errors (strlen(BIGINT), 'Malformed JSON')
        json_hint = "; some are numbers, lists or objects" if types["text"] == "JSON" else ""
        raise SqltokError(f"the input's text column is {types['text']}, not strings: each document must be a "
                          f"string (or NULL){json_hint}")
    run.step("read", union if "doc_id" in cols else f"SELECT row_number() OVER () AS doc_id, * FROM ({union})")
    if "doc_id" in cols:  # the steps tell documents apart by it: a shared id would drop them together
        n, distinct = con.execute(f"SELECT count(*), count(DISTINCT doc_id) FROM {run.current}").fetchone()
        if distinct != n:
            raise SqltokError(f"the input's doc_id column is not unique ({n - distinct} of {n} rows repeat an id "
                              f"or have none): give each document its own doc_id, or drop the column and "
                              f"prepare numbers the documents")
    bad = invalid_utf8_count(con, run.prev)
    empty = con.execute(f"SELECT count(*) FROM {run.current} WHERE text IS NULL OR text = ''").fetchone()[0]
    run.step("clean", clean_query(con, run.prev, s.clean), null_or_empty=empty, invalid_utf8=bad,
             invalid_utf8_action=s.clean.invalid_utf8)
    if s.detect_language:
        lang = "detect_language(text)"
        run.step("detect_language", f"SELECT * REPLACE ({lang} AS lang) FROM {run.current}"
                 if "lang" in run.columns() else f"SELECT *, {lang} AS lang FROM {run.current}")
    if "lang" in run.columns():
        run.manifest.languages_before = [asdict(x) for x in language_shares(con, run.prev)]
    if s.mask_pii:
        kinds = [k for k in KINDS if k in s.mask_pii]
        marks = [{**PLACEHOLDERS, **s.placeholders}[k] for k in kinds]
        call = f"sqltok_pii_masked(text, {_list(kinds)}, {_list(marks)})"
        run.step("mask_pii", f"SELECT * EXCLUDE (sqltok_masked) REPLACE (sqltok_masked.text AS text), "
                             f"sqltok_masked.kinds AS sqltok_pii_kinds "
                             f"FROM (SELECT *, {call} AS sqltok_masked FROM {run.current})")
        counts = dict(con.execute(sql_text("prepare_pii_counts").format(table=run.current)).fetchall())
        run.manifest.pii = {k: counts.get(k, 0) for k in kinds}
        con.execute(f"ALTER TABLE {run.current} DROP COLUMN sqltok_pii_kinds")
    if s.dedup is not None and s.dedup.exact:
        inner = quote_literal(f"SELECT doc_id, text FROM {run.current}")
        run.step("dedup_exact", f"SELECT * FROM {run.current} ANTI JOIN (SELECT doc_id FROM "
                                f"sqltok_exact_duplicates({inner}) WHERE NOT keep) d USING (doc_id)")
    if s.dedup is not None and s.dedup.near is not None:
        inner = quote_literal(f"SELECT doc_id, text FROM {run.current}")
        run.step("dedup_near", f"SELECT * FROM {run.current} ANTI JOIN (SELECT doc_id FROM "
                               f"sqltok_near_duplicates({inner}, threshold := {float(s.dedup.near)}, "
                               f"seed := {int(s.seed)}) WHERE NOT keep) d USING (doc_id)", threshold=s.dedup.near)
    if s.balancing:
        if "lang" not in run.columns():
            raise SqltokError("balancing needs languages: add --detect-language or give the input a lang column")
        if "copy" in run.columns():
            raise SqltokError("balancing adds a column 'copy' (which repeat of its document a row is): the input "
                              "has one already; rename or drop it")
        targets = target_shares(language_shares(con, run.prev), s.ratios, s.temperature, s.uniform)
        run.step("balance", balance_query(run.prev, targets, s.seed))
        reached = {x.lang: x.doc_share for x in language_shares(con, f"{run.prev} WHERE lang IS NOT NULL")}
        run.manifest.balance = {"asked": targets, "reached": reached}
    if "lang" in run.columns():
        run.manifest.languages_after = [asdict(x) for x in language_shares(con, run.prev)]


def _list(values: list[str]) -> str:
    return "[" + ", ".join(quote_literal(v) for v in values) + "]"
