"""`sqltok_pieces(text, mode)` in SQL: a long document as pieces that counting can unnest in linear
time (see `sqltok.pretokenizer._pieces`). Modes: 'pretokens_script', 'pretokens_simple' (GPT-4o's
pattern), 'pretokens_<name>' for the other patterns of `PRETOKEN_CUTS` ('pretokens_cl100k', ...),
'candidates', 'lines'."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.pretokenizer._pieces import PRETOKEN_CUTS, pieces_arrow

from .define import define, one_constant

#: Bytes a piece holds at least before it is cut: its list of pretokens stays short, and one call of a
#: UDF on a vector of 2,048 pieces (or of documents shorter than this) sees at most about 32 MB.
PIECE_BYTES = 1 << 14
#: The longest line `--lines` reads (as the longest JSONL line).
MAX_LINE_BYTES = 1 << 28

_MODES = {"pretokens_script": ("pretokens", True, True), "pretokens_simple": ("pretokens", False, True),
          **{f"pretokens_{name}": ("pretokens", *cuts) for name, cuts in PRETOKEN_CUTS.items()
             if name not in ("script_aware", "o200k")},
          "candidates": ("candidates", True, True), "lines": ("lines", True, True)}


def _pieces(texts: pa.Array, modes: pa.Array) -> pa.Array:
    kind, script_aware, newline_cuts = _MODES[one_constant(modes, _MODES, "sqltok_pieces", "mode")]
    try:
        return pieces_arrow(texts, kind, script_aware, PIECE_BYTES,
                            MAX_LINE_BYTES if kind == "lines" else -1, newline_cuts)
    except ValueError as e:
        raise ValueError(f"{e} (at most {MAX_LINE_BYTES:,} bytes a line)" if kind == "lines" else str(e)) from None


def register(con: duckdb.DuckDBPyConnection) -> None:
    varchar = duckdb.sqltype("VARCHAR")
    define(con, "sqltok_pieces", _pieces, [varchar, varchar], duckdb.list_type(varchar))
