"""Counting: every distinct unit of a corpus's documents (pretokens, supermerge candidates) with its
count, in a table.

`count_units` is the one entry point: a query in, a `Counts` out. Nothing downstream depends on how
the table was filled, so counting can run as map/reduce elsewhere (each worker splits and groups a
shard, a reduce sums) and hand back the same table; the sums are exact, so the models are the same.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from sqltok.corpus.sources import Source
from sqltok.duck import arrow_table
from sqltok.sql_files import sql_text
from sqltok.training.corpus import CorpusStats, as_source, prepare_corpus
from sqltok.training.whole_files import is_staged, stage_whole_files
from sqltok.training.work_tables import WorkTables


@dataclass(frozen=True)
class Units:
    """What counting splits a document into: `split`, a SQL expression of its `text` giving a list,
    and the `column` the units are counted in; `pieces`, the `sqltok_pieces` mode that first cuts
    long documents where no unit crosses (so no list grows with a document), or None when the split
    cuts them itself; `weighted`: the split gives (unit, n) pairs whose n are summed, not units."""

    column: str
    split: str
    pieces: str | None
    weighted: bool = False


def pretoken_units(script_aware: bool, pattern: str | None = None) -> Units:
    """Pretokens of the GPT-4o pattern, in runs of one script first unless not `script_aware`; or,
    given a `pattern` name of `PRETOKEN_CUTS` ('cl100k', ...), of that pattern. The batch counter
    cuts long documents itself."""
    name = pattern if pattern is not None else "script_aware" if script_aware else "o200k"
    return Units("pretoken", f"sqltok_pretoken_counts(text, '{name}')", None, weighted=True)


@dataclass(frozen=True)
class Counts:
    """Work table `table(<column>, n)`: each distinct unit once; `unique` rows, `total` the sum of n;
    `keys`: the units are supermerge candidates held as keys (BLOB: their ids as int32 bytes, see
    `bpe.candidates.candidate_ids`), not lists of ids."""

    table: str
    column: str
    unique: int
    total: int
    keys: bool = False

    def arrow(self, con: duckdb.DuckDBPyConnection) -> pa.Table:
        """The counts as an Arrow table (unit, n)."""
        return arrow_table(con, f"SELECT {self.column}, n FROM {self.table}")


def counted(con: duckdb.DuckDBPyConnection, table: str, column: str) -> Counts:
    """The `Counts` of a table of unit counts filled in any way."""
    unique, total = con.execute(f"SELECT count(*), coalesce(sum(n), 0)::BIGINT FROM {table}").fetchall()[0]
    return Counts(table, column, unique, total)


def count_units(con: duckdb.DuckDBPyConnection, query: str, units: Units, target: str) -> Counts:
    """Count the `units` of the non-empty documents of `query` (a `text` column) into new TEMP
    table `target`."""
    unit, n = ("counted.unit", "sum(counted.n)") if units.weighted else ("counted", "count(*)")
    texts = sql_text("document_texts").format(source=query) if units.pieces is None else \
        sql_text("document_pieces").format(pieces=units.pieces, source=query)
    con.execute(sql_text("count_units").format(target=target, column=units.column, split=units.split, unit=unit,
                                               n=n, texts=texts))
    return counted(con, target, units.column)


@dataclass(frozen=True)
class CorpusCounts:
    """A corpus's pretoken counts and what it held; `query` reads its documents again, without the
    checks counting passed (None when the counts come from a stored model or a cluster, whose tasks
    read the files themselves)."""

    stats: CorpusStats
    script_aware: bool
    pretokens: Counts
    query: str | None


def count_corpus(con: duckdb.DuckDBPyConnection, source: Source | str, script_aware: bool,
                 work: WorkTables, pattern: str | None = None) -> CorpusCounts:
    """Prepare `source` and count its pretokens (see `pretoken_units`) into the run's work table
    `pretoken_counts` (whole-file documents are first read into the work table `documents` in
    pieces, see `whole_files`)."""
    src = as_source(source)
    corpus = stage_whole_files(con, src, work.table("documents")) if is_staged(src) else prepare_corpus(con, src)
    pretokens = count_units(con, corpus.query, pretoken_units(script_aware, pattern), work.table("pretoken_counts"))
    return CorpusCounts(corpus.stats, script_aware, pretokens, corpus.reread)
