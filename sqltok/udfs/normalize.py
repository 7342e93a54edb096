"""`normalize(text, form)` and `sqltok_bert_normalize` (behind the `bert_normalize` macro of
`sql/normalize.sql`) in SQL, over Arrow batches (results go back to DuckDB as string_view arrays whose
unchanged rows point into the batch)."""
from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.normalizers._normalize import bert_normalize_arrow, normalize_arrow
from sqltok.threads import default_threads

from .by_model import by_model
from .define import define


def _normalize(texts: pa.Array, forms: pa.Array) -> pa.Array:
    """NULL text or form gives NULL; a form other than NFC, NFD, NFKC, NFKD is an error."""
    return by_model(forms, texts, lambda f, t: normalize_arrow(t, f, default_threads()), pa.string())


def _bert_normalize(texts: pa.Array, clean: pa.Array, chinese: pa.Array, strip: pa.Array,
                    lower: pa.Array) -> pa.Array:
    """The switches, usually constant, are grouped as one small integer per row."""
    switches = (clean, chinese, strip, lower)
    if any(s.null_count for s in switches):
        raise ValueError("bert_normalize: the switches must not be NULL (strip_accents NULL is the "
                         "bert_normalize macro's default: it follows lowercase)")
    key = pc.add(pc.add(pc.multiply(clean.cast(pa.int8()), 8), pc.multiply(chinese.cast(pa.int8()), 4)),
                 pc.add(pc.multiply(strip.cast(pa.int8()), 2), lower.cast(pa.int8())))

    def run(k: int, t: pa.Array) -> pa.Array:
        return bert_normalize_arrow(t, bool(k & 8), bool(k & 4), bool(k & 2), bool(k & 1), default_threads())

    return by_model(key, texts, run, pa.string())


def register(con: duckdb.DuckDBPyConnection) -> None:
    varchar, boolean = duckdb.sqltype("VARCHAR"), duckdb.sqltype("BOOLEAN")
    define(con, "normalize", _normalize, [varchar, varchar], varchar)
    define(con, "sqltok_bert_normalize", _bert_normalize, [varchar, boolean, boolean, boolean, boolean], varchar)
