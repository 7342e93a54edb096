"""Corpus preparation: a training source as a query with a VARCHAR `text` column, and what it holds."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import duckdb

from sqltok.corpus.columns import require_text_column, varchar_text
from sqltok.corpus.sources import Source, is_line_too_long
from sqltok.errors import CorpusError
from sqltok.sql_files import sql_text


@dataclass(frozen=True)
class CorpusStats:
    """What a training source held: documents used, NULL and empty ones skipped, UTF-8 bytes."""

    source: str
    documents: int
    null_documents: int
    empty_documents: int
    bytes: int

    def model_info(self, **more) -> dict:
        """The model row's corpus fields (see `store.save_model`), with `more`."""
        return {**asdict(self), **more}


@dataclass(frozen=True)
class Corpus:
    """A prepared source: `query` gives its documents as VARCHAR `text`, `reread` the same once
    `query` has been read without error."""

    query: str
    stats: CorpusStats
    reread: str  # the documents again, once `query` has been read without error (faster, unchecked)


def as_source(source: Source | str) -> Source:
    """A `Source`, or a SQL query string with a `text` column as one."""
    if isinstance(source, Source):
        return source
    if isinstance(source, str):
        return Source(sql=source)
    raise TypeError("source must be a SQL query string or a sqltok.Source")


def prepare_corpus(con: duckdb.DuckDBPyConnection, source: Source | str) -> Corpus:
    """The source's text query and statistics; a source without non-empty documents is an error."""
    corpus = read_corpus(con, source)
    require_documents(corpus.stats, as_source(source))
    return corpus


def read_corpus(con: duckdb.DuckDBPyConnection, source: Source | str) -> Corpus:
    """The source's text query and statistics, which may count no documents (one shard of many).
    JSONL is read in short-line buffers (every core, see `Source.short_lines`) unless a line is
    longer than they hold."""
    src = as_source(source)
    try:
        return _read(con, src.short_lines())
    except duckdb.Error as e:
        if not is_line_too_long(e):
            raise
    return _read(con, src)


def _read(con: duckdb.DuckDBPyConnection, src: Source) -> Corpus:
    """The checked query of `src` reads JSONL values as JSON, to refuse one that is not a string. When
    no document of the statistics' cheaper VARCHAR read looks like another JSON value, every value
    was a string, and that read, a quarter of the time, is the query too."""
    query = _text_query(con, src)
    unchecked = src.unchecked_query() if query == src.query() else query
    doubtful = sql_text("jsonl_doubtful") if unchecked != query else "0"
    docs, nulls, empties, nbytes, maybe_not_text = con.execute(
        sql_text("corpus_stats").format(source=unchecked, doubtful=doubtful)).fetchall()[0]
    if maybe_not_text == 0:
        query = unchecked
    return Corpus(query, CorpusStats(src.describe(), docs, nulls, empties, nbytes), unchecked)


def require_documents(stats: CorpusStats, src: Source) -> None:
    """A training source must hold a non-empty document."""
    if stats.documents == 0:
        if stats.null_documents and not stats.empty_documents:
            raise CorpusError(f"the training source {src.describe()!r} has no non-empty documents: all "
                              f"{stats.null_documents:,} rows have no {src.text_key!r} (is the text key or column right?)")
        raise CorpusError(f"the training source {src.describe()!r} has no non-empty documents")


def _text_query(con, src: Source) -> str:
    """The source's query with `text` as VARCHAR (see `varchar_text`)."""
    query = src.query()
    try:
        return varchar_text(con, src, query)
    except duckdb.Error as e:
        try:
            require_text_column(con, src)
        except duckdb.Error:
            pass  # the source cannot be read at all: DuckDB's error says why
        hint = " (a string source is a SQL query: give a file as sqltok.Source(path=...))" \
            if src.sql is not None and os.path.exists(src.sql.strip()) else ""
        raise CorpusError(f"cannot read the training source {src.describe()!r}{hint}: {e}") from None
