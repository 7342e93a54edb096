"""Whole-file documents (`--whole-file`) read in chunks into a work table of pieces, so that a
document of any size is counted in bounded memory outside DuckDB.

DuckDB's `read_text` holds a file as one value, and every function it is passed to gets a copy of
it: a 1 GB document cost 9 GB. Here a file is read `CHUNK_BYTES` at a time and cut where no
pretoken and no supermerge candidate crosses (`pieces_arrow`'s "candidates" cut points, which
depend on the two bytes around the cut only, so a cut found in a chunk is one in the whole file);
the pieces go into a TEMP table, which DuckDB keeps within its memory limit (spilling beyond it),
and the last piece of a chunk, which the chunk's end may have cut short, is carried into the next.
A document with no cut point (one line, or no ASCII letter after any line feed) is carried whole:
its size is then the amount held outside DuckDB.
"""
from __future__ import annotations

import os

import duckdb
import pyarrow as pa

from sqltok.corpus.sources import Source, quote_literal
from sqltok.errors import CorpusError
from sqltok.pretokenizer._pieces import pieces_arrow
from sqltok.training.corpus import Corpus, CorpusStats
from sqltok.udfs.pieces import PIECE_BYTES

#: Bytes read from a file at a time.
CHUNK_BYTES = 1 << 24


def stage_whole_files(con: duckdb.DuckDBPyConnection, src: Source, table: str,
                      chunk_bytes: int = CHUNK_BYTES) -> Corpus:
    """The documents of a `text_mode='file'` source as pieces in new TEMP table `table(text)`."""
    files = [r[0] for r in con.execute(f"SELECT file FROM glob({quote_literal(src.path)})").fetchall()]
    if src.max_documents is not None:
        files = files[:src.max_documents]
    con.execute(f'CREATE TEMP TABLE "{table}" (text VARCHAR)')
    documents = empty = nbytes = 0
    for path in files:
        size = _stage_file(con, path, table, chunk_bytes)
        documents += size > 0
        empty += size == 0
        nbytes += size
    if not documents:
        raise CorpusError(f"the training source {src.describe()!r} has no non-empty documents")
    query = f'SELECT text FROM "{table}"'
    return Corpus(query, CorpusStats(src.describe(), documents, 0, empty, nbytes), query)


def _stage_file(con: duckdb.DuckDBPyConnection, path: str, table: str, chunk_bytes: int) -> int:
    """Append the pieces of one file to `table`; the file's size in bytes."""
    carry = bytearray()
    scanned = read = 0  # carry[:scanned] is valid UTF-8 with no cut point looked for again
    with open(path, "rb") as f:
        while chunk := f.read(chunk_bytes):
            carry += chunk
            read += len(chunk)
            carry, scanned = _emit(con, table, carry, scanned, read - len(carry), path, final=False)
    _emit(con, table, carry, scanned, read - len(carry), path, final=True)
    return read


def _emit(con, table: str, buf: bytearray, scanned: int, offset: int, path: str,
          final: bool) -> tuple[bytearray, int]:
    """Insert the complete pieces of `buf` (byte `offset` of the file onwards) and return what is
    left (the last piece, unless `final`) and how much of it is scanned. Only the bytes from
    `scanned` on are looked at, and the line feed before them (a cut point follows one): bytes are
    scanned once however long a document runs without a cut point."""
    end = len(buf) if final else _char_start(buf)
    start = scanned - 1 if scanned and buf[scanned - 1] == 10 else scanned
    if end <= start:
        return buf, scanned
    data = pa.py_buffer(buf)
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, _offsets([start, end]), data])
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        bad = start + _first_invalid(buf[start:end])
        raise CorpusError(f"{path} is not valid UTF-8 at byte {offset + bad}") from None
    bounds = _piece_bounds(pieces_arrow(text, "candidates", True, PIECE_BYTES).values)
    cuts = bounds[1:-1] + ([end] if final else [])  # cut points in buf; the first piece starts at 0
    if not cuts:
        return buf, end
    rows = pa.Array.from_buffers(pa.large_string(), len(cuts), [None, _offsets([0, *cuts]), data])
    con.register("__sqltok_pieces", pa.table({"text": rows}))
    try:
        con.execute(f'INSERT INTO "{table}" SELECT text FROM __sqltok_pieces')
    finally:
        con.unregister("__sqltok_pieces")
    return buf[cuts[-1]:], end - cuts[-1]


def _piece_bounds(pieces: pa.Array) -> list[int]:
    """Where the pieces (which tile their buffer) start, and where the last ends."""
    return pa.Array.from_buffers(pa.int64(), len(pieces) + 1, [None, pieces.buffers()[1]],
                                 offset=pieces.offset).to_pylist()


def _offsets(values: list[int]) -> pa.Buffer:
    return pa.array(values, pa.int64()).buffers()[1]


def _char_start(buf: bytearray) -> int:
    """The last position in `buf` at which a character starts (so `buf[:it]` ends between characters)."""
    i = len(buf) - 1
    while i > 0 and len(buf) - i < 4 and buf[i] & 0xC0 == 0x80:
        i -= 1
    return i


def _first_invalid(data: bytearray) -> int:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start
    return len(data)


def is_staged(src: Source) -> bool:
    """Whether `src` is read by `stage_whole_files` (whole-file documents from files)."""
    return src.path is not None and src.text_mode == "file" and not os.path.isdir(src.path)
