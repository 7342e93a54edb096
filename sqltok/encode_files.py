"""`sqltok encode`: a file's text column to token ids (or counts) in a Parquet or JSONL file.

The output is written under a temporary name beside it and renamed when complete, so a failed or
interrupted run leaves no partial file; a run killed outright may leave one (`.NAME.sqltok-partial`),
which no glob of the outputs' suffix reads. The input is never overwritten.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from glob import glob, has_magic
from pathlib import Path

import duckdb
import pyarrow as pa

from sqltok.corpus.columns import TEXT_KEY_HINT, require_columns, typed_rows_query, varchar_text
from sqltok.corpus.sources import Source, quote_ident, quote_literal
from sqltok.errors import SqltokError
from sqltok.interrupts import interruptible
from sqltok.named_tokenizers import named_tokenizers

#: Output suffixes and the COPY options they mean.
_FORMATS = {".parquet": "FORMAT parquet", ".jsonl": "FORMAT json", ".ndjson": "FORMAT json",
            ".json": "FORMAT json"}
_COMPRESSION = {".gz": "gzip", ".zst": "zstd"}


@dataclass(frozen=True)
class EncodeSummary:
    """What `encode_file` wrote."""

    output: str
    rows: int
    tokens: int


def output_options(path: str) -> str:
    """The COPY options for an output path, by its suffix: Parquet or JSONL, optionally .gz/.zst."""
    p = Path(path.lower())
    compression = _COMPRESSION.get(p.suffix)
    stem = p.with_suffix("") if compression else p
    fmt = _FORMATS.get(stem.suffix)
    if fmt is None or (compression and fmt == "FORMAT parquet"):
        raise SqltokError(f"cannot tell the output format of {path}: use .parquet, or .jsonl (.ndjson, .json) "
                          "optionally compressed as .gz or .zst")
    return fmt + (f", COMPRESSION {compression}" if compression else "")


def _reader(output: str, path: Path) -> str:
    """A table function reading back from `path` (whatever its suffix) what COPY wrote for `output`."""
    suffix = Path(output.lower()).suffix
    if suffix == ".parquet":
        return f"read_parquet({quote_literal(str(path))})"
    return f"read_json_auto({quote_literal(str(path))}, compression = '{_COMPRESSION.get(suffix, 'none')}')"


def _inputs(path: str) -> set[Path]:
    return {Path(p).resolve() for p in (glob(path) if has_magic(path) else [path])}


def id_list_type(n_vocab: int) -> str:
    """The narrowest unsigned list type that holds every id of a vocabulary of `n_vocab` tokens."""
    return "USMALLINT[]" if n_vocab <= 1 << 16 else "UINTEGER[]"


def holds_no_line(src: Source) -> bool:
    """Whether `src` is one JSONL file (compressed or not) of white space only: an empty file, or a
    byte range within one line longer than a cluster's shard."""
    if not src.is_jsonl or src.path is None or not os.path.isfile(src.path):
        return False
    with pa.input_stream(src.path, compression="detect") as f:  # .gz and .zst by the suffix
        while chunk := f.read(1 << 16):
            if chunk.strip():
                return False
    return True


@interruptible
def encode_file(con: duckdb.DuckDBPyConnection, tokenizer: str, src: Source, output: str, *,
                count: bool = False, allow_special: bool = False, keep_columns: tuple[str, ...] = (),
                compact: bool = False) -> EncodeSummary:
    """Write the ids (`ids`, INTEGER[]) or token counts (`n_tokens`) of each document of `src` to
    `output`, after the columns of `keep_columns` ("*" for all), in document order. `compact`
    writes the ids as `id_list_type` of the vocabulary and their number (`n_tokens`) beside them."""
    options = output_options(output)
    if src.path is not None and Path(output).resolve() in _inputs(src.path):
        raise SqltokError(f"the output {output} is the input: choose another output file")
    fn = "token_count" if count else "encode_special" if allow_special else "encode"
    column = "n_tokens" if count else "ids"
    empty = holds_no_line(src)  # DuckDB reads no column of it: its output is one of no rows
    rows_query = "SELECT NULL::VARCHAR AS text LIMIT 0" if empty else typed_rows_query(con, src)
    whole_rows = not empty and rows_query != src.query()  # every column as DuckDB reads it (JSONL: a sample's keys)
    key = src.text_key if whole_rows else "text"
    wanted = {key: TEXT_KEY_HINT} if whole_rows else {}
    wanted.update((c, "to keep") for c in keep_columns if c != "*")
    if wanted:
        require_columns(con, src, wanted)
    rows_query = rows_query if empty else varchar_text(con, src, rows_query, key)
    kept = "*, " if keep_columns == ("*",) else "".join(f"{quote_ident(c)}, " for c in keep_columns)
    values = f"{fn}({quote_literal(tokenizer)}, {quote_ident(key)})"
    if compact and not count:
        values = f"{values}::{id_list_type(named_tokenizers(con).get(tokenizer).n_vocab)} AS ids, len(ids) AS n_tokens"
    else:
        values = f"{values} AS {column}"
    out = Path(output)
    tmp = out.with_name(f".{out.name}.sqltok-partial")  # not NAME's suffix: `ids/*.parquet` never reads it
    try:
        con.execute(f"COPY (SELECT {kept}{values} FROM ({rows_query})) TO {quote_literal(str(tmp))} ({options})")
        measure = f"sum({column})" if count else f"sum(len({column}))"
        rows, tokens = con.execute(f"SELECT count(*), coalesce({measure}, 0) FROM {_reader(output, tmp)}"
                                   ).fetchall()[0]
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return EncodeSummary(output, rows, int(tokens))
