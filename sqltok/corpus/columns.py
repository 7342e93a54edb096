"""A source's columns checked by name before a query reads them: a missing one is an error naming the
source and the columns it has (DuckDB's binder message names neither)."""
from __future__ import annotations

import duckdb

from sqltok.corpus.sources import Source, quote_ident
from sqltok.errors import CorpusError
from sqltok.sql_files import sql_text

#: How a caller names the text column, for the error when a source has none of that name.
TEXT_KEY_HINT = "(name the text column with --text-key / text_key=)"


def source_columns(con: duckdb.DuckDBPyConnection, source: Source) -> list[str]:
    """The columns of `source` (JSONL: its keys; plain text: `text`)."""
    return [row[0] for row in con.execute(f"DESCRIBE {source.rows_query()}").fetchall()]


def typed_rows_query(con: duckdb.DuckDBPyConnection, source: Source) -> str:
    """`source.rows_query()`, a JSONL source's keys read as the types DuckDB detects (detected once,
    here: the query does not detect them again), but a text key whose strings it detects as dates or
    times (all sampled values like "2024-01-02") read as VARCHAR, the strings as written: DATE text
    was a binder error in `encode`. Other types stay, for the callers' checks."""
    rows = source.rows_query()
    if not source.is_jsonl:
        return rows
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {rows})").fetchall())
    if types.get(source.text_key, "").startswith(("DATE", "TIME")):
        types[source.text_key] = "VARCHAR"
    return source.rows_query(types)


def require_text_column(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """A CorpusError when `source` has no column named its text key. Not asked of JSONL, whose keys
    come from a sample of its lines: a line without the key reads as a NULL text."""
    if not source.is_jsonl and source.rows_query() != source.query():
        require_columns(con, source, {source.text_key: TEXT_KEY_HINT})


def require_columns(con: duckdb.DuckDBPyConnection, source: Source, wanted: dict[str, str]) -> None:
    """A CorpusError for the first name of `wanted` (name: purpose) that `source` has no column of:
    '... has no column NAME PURPOSE; its columns: ...'."""
    columns = source_columns(con, source)
    # DuckDB binds a column whatever the case of its name (as training reads it); a JSONL key is read
    # as it is written
    fold = (lambda c: c) if source.is_jsonl else str.lower
    known = {fold(c) for c in columns}
    for name, purpose in wanted.items():
        if fold(name) not in known:
            raise CorpusError(f"the source {source.describe()!r} has no column {name!r} {purpose}; its columns: "
                              f"{', '.join(columns)}")


def varchar_text(con: duckdb.DuckDBPyConnection, source: Source, query: str, column: str = "text") -> str:
    """`query` (the documents of `source`, their text in `column` and maybe other columns) with that
    column as VARCHAR: BLOB text (Parquet binary) is decoded once every document is known to be
    UTF-8; a CorpusError names the first document that is not, and a text of another type."""
    kinds = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {query})").fetchall())
    kind = next((k for c, k in kinds.items() if c.lower() == column.lower()), None)
    col = quote_ident(column)
    if kind == "BLOB":
        checked = f"SELECT {col} AS text FROM ({query})"
        bad = con.execute(sql_text("first_invalid_utf8").format(source=checked)).fetchall()[0][0]
        if bad is not None:
            raise CorpusError(f"document {bad} of {source.describe()!r} is not valid UTF-8 (clean or decode it "
                              "first: sqltok prepare fixes or drops invalid UTF-8)")
        return f"SELECT * REPLACE (decode({col}) AS {col}) FROM ({query})"
    if kind not in ("VARCHAR", '"NULL"'):  # "NULL": a query whose texts are all NULL literals
        raise CorpusError(f"the text of {source.describe()!r} is {kind}, not VARCHAR or BLOB")
    return query
