"""Training sources as SQL: every source becomes a query with one column `text`, in document order.

Files are read by DuckDB's own readers (Parquet, JSON, text); tables, views and queries are used as
they are. DuckDB keeps insertion order, so "the first N documents" means the first N in file order.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from glob import has_magic

import duckdb

from sqltok.errors import CorpusError

_JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
_COMPRESSION = (".gz", ".zst")

#: DuckDB's JSON reader takes lines of up to twice its `maximum_object_size` and reads a file in
#: buffers of that size, one thread each. The default takes lines of up to 256 MB (a buffer of 512 MB:
#: a smaller file is read, and everything after the read runs, on one core); `short_lines()` takes
#: lines of up to 32 MB in buffers of 32 MB (every core from 64 MB of file up).
LONG_LINES = 256 << 20
SHORT_LINES = 16 << 20


def quote_literal(s: str) -> str:
    """`s` as a SQL string literal."""
    return "'" + s.replace("'", "''") + "'"


def quote_ident(s: str) -> str:
    """`s` as a SQL identifier."""
    return '"' + s.replace('"', '""') + '"'


@dataclass(frozen=True)
class Source:
    """Where documents come from. Exactly one of `path`, `table` and `sql` is set.

    `text_key` names the text field (JSONL key, Parquet or table column); `text_mode` is required for
    plain text files, and refused for the other sources: "file" (one document per file) or "line"
    (one document per line, a CRLF line end taken off whole unless `strip_cr` is false: spm_train
    keeps the "\r").
    """

    path: str | None = None
    table: str | None = None
    sql: str | None = None
    text_key: str = "text"
    text_mode: str | None = None
    max_documents: int | None = None
    json_object_size: int = LONG_LINES  # JSONL: DuckDB's maximum_object_size (see LONG_LINES)
    strip_cr: bool = True
    label: str | None = None  # what `describe()` says, for a source made from another (a holdout split)

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.path, self.table, self.sql)) != 1:
            raise CorpusError("give exactly one source: a file path, a table name or a SQL query")
        if self.text_mode not in (None, "file", "line"):
            raise CorpusError(f"text_mode must be 'file' or 'line', not {self.text_mode!r}")
        rows = self._rows_format() if self.text_mode is not None else None
        if rows:
            flag = "--lines" if self.text_mode == "line" else "--whole-file"
            raise CorpusError(f"{rows} has a document per row ({self.text_key!r} field): text_mode "
                              f"{self.text_mode!r} ({flag}) is for plain text files only")
        if self.max_documents is not None and self.max_documents < 1:
            raise CorpusError("max_documents must be a positive number")

    def short_lines(self) -> Source:
        """This source read in smaller buffers (lines up to 32 MB, see SHORT_LINES): faster where that
        suffices; a longer line is DuckDB's "maximum_object_size" error (see `is_line_too_long`)."""
        return replace(self, json_object_size=SHORT_LINES)

    def describe(self) -> str:
        """A short description for the model's record."""
        return self.label or self.path or self.table or self.sql or ""

    def query(self) -> str:
        """A SQL query with one column `text` (VARCHAR or BLOB), one row per document, in order."""
        if self.sql is not None:  # DuckDB's query(): one SELECT, a trailing ';' or comment allowed
            q = f"SELECT {quote_ident(self.text_key)} AS text FROM query({quote_literal(self.sql)})"
        elif self.table is not None:
            q = f"SELECT {quote_ident(self.text_key)} AS text FROM {self._table_ref()}"
        else:
            q = self._file_query()
        return self._limited(q)

    def unchecked_query(self) -> str:
        """`query()`'s rows without its type check, read the cheapest way: the same rows wherever
        `query()` reads without error (JSONL values as VARCHAR, a third of the time of JSON and `->>`;
        a value that is not a string comes out as its JSON text, where `query()` refuses it). For
        counting documents and bytes, and for reading documents again once `query()` has been read."""
        if not self.is_jsonl:
            return self.query()
        q = f"SELECT {quote_ident(self.text_key)} AS text FROM {self._read_json({self.text_key: 'VARCHAR'})}"
        return self._limited(q)

    @property
    def is_jsonl(self) -> bool:
        """Whether the source is JSONL files (whose keys DuckDB infers from a sample of lines)."""
        return self.path is not None and self._stem().endswith(_JSON_SUFFIXES)

    def _limited(self, q: str) -> str:
        """Query `q` cut to `max_documents` rows when that is set."""
        return q if self.max_documents is None else f"SELECT text FROM ({q}) LIMIT {int(self.max_documents)}"

    def rows_query(self, types: dict[str, str] | None = None) -> str:
        """A SQL query with every column of the source (plain text: `text` only), in order; JSONL
        keys read as `types` says (name: DuckDB type, the keys it leaves out not read), else as
        DuckDB detects them (see `columns.typed_rows_query`)."""
        if self.sql is not None:
            q = f"SELECT * FROM query({quote_literal(self.sql)})"
        elif self.table is not None:
            q = f"SELECT * FROM {self._table_ref()}"
        else:
            stem = self._stem()
            lit = quote_literal(self.path)
            if stem.endswith(".parquet"):
                q = f"SELECT * FROM read_parquet({lit})"
            elif stem.endswith(_JSON_SUFFIXES):
                q = f"SELECT * FROM {self._read_json(types)}"
            else:
                return self.query()
        if self.max_documents is not None:
            q = f"{q} LIMIT {int(self.max_documents)}"
        return q

    def _read_json(self, types: dict[str, str] | None) -> str:
        """DuckDB's reader of the JSONL files: the keys of `types` as those types (every line an object,
        `records`: the reader's detection of it cost 0.15-0.3 s a query), else every key as detected."""
        columns = "" if types is None else (", records = true, columns = {" + ", ".join(
            f"{quote_literal(k)}: {quote_literal(v)}" for k, v in types.items()) + "}")
        return (f"read_json({quote_literal(self.path)}, format = 'newline_delimited'{columns}, "
                f"maximum_object_size = {self.json_object_size})")

    def _table_ref(self) -> str:
        """The table or view `table` names (`schema.name` too) as DuckDB's `query_table`: a name, never
        more SQL (pasted into the query, "docs; DROP TABLE t" ran the DROP)."""
        return f"query_table({quote_literal(self.table)})"

    def _stem(self) -> str:
        path = self.path
        assert path is not None
        if not has_magic(path) and not os.path.exists(path):
            raise CorpusError(f"no such file: {path}")
        return _suffix_stem(path)

    def _rows_format(self) -> str | None:
        """What the source is when its documents are rows (a Parquet or JSONL file, a table, a
        query), None for a plain text file."""
        if self.path is None:
            return f"table {self.table}" if self.table is not None else "a SQL query"
        kind = rows_format(self.path)
        return f"{self.path} ({kind})" if kind else None

    def _file_query(self) -> str:
        path = self.path
        stem = self._stem()
        lit = quote_literal(path)
        key = quote_ident(self.text_key)
        if stem.endswith(".parquet"):
            return f"SELECT {key} AS text FROM read_parquet({lit})"
        if stem.endswith(_JSON_SUFFIXES):
            # Read as JSON, so that a number or a list under the key is an error, not stringified.
            wrong = quote_literal(f"a line's {self.text_key!r} is not a string but a ")
            return ("SELECT CASE WHEN kind IS NULL OR kind = 'NULL' THEN NULL WHEN kind = 'VARCHAR' THEN v ->> '$' "
                    f"ELSE error({wrong} || kind) END AS text "
                    f"FROM (SELECT {key} AS v, json_type({key}) AS kind "
                    f"FROM {self._read_json({self.text_key: 'JSON'})})")
        if self.text_mode == "file":
            return f"SELECT content AS text FROM read_text({lit})"
        if self.text_mode == "line":
            # Pieces of whole lines first (`sqltok_pieces`, registered by `sqltok.register`), each
            # list unnested from a subquery's column (see count_units.sql): linear time.
            pieces = f"SELECT unnest(p) AS piece FROM (SELECT sqltok_pieces(content, 'lines') AS p FROM read_text({lit}))"
            split = f"SELECT string_split(regexp_replace(piece, '\\n$', ''), chr(10)) AS l FROM ({pieces})"
            lines = f"SELECT unnest(l) AS line FROM ({split})"
            if not self.strip_cr:
                return f"SELECT line AS text FROM ({lines})"
            return f"SELECT regexp_replace(line, '\\r$', '') AS text FROM ({lines})"
        if stem.endswith(".txt"):
            raise CorpusError(f"{path} is plain text: say whether a document is the whole file "
                              "(text_mode='file', --whole-file) or one line (text_mode='line', --lines)")
        raise CorpusError(f"cannot tell the format of {path}: expected .parquet, .jsonl/.ndjson/.json "
                          "(optionally .gz/.zst), or plain text with text_mode 'file' or 'line'")


def _suffix_stem(path: str) -> str:
    """`path` in lower case without a compression suffix (.gz, .zst): its format's suffix last."""
    stem = path.lower()
    for c in _COMPRESSION:
        stem = stem.removesuffix(c)
    return stem


def rows_format(path: str) -> str | None:
    """"Parquet" or "JSONL" for files of one of these formats by their name, whose documents are
    rows; None for plain text."""
    stem = _suffix_stem(path)
    if stem.endswith(".parquet"):
        return "Parquet"
    return "JSONL" if stem.endswith(_JSON_SUFFIXES) else None


def is_line_too_long(error: Exception) -> bool:
    """Whether `error` is DuckDB's refusal of a JSON line longer than the reader was set up for."""
    return isinstance(error, duckdb.InvalidInputException) and '"maximum_object_size"' in str(error)
