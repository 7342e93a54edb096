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


def by_bert_switches(texts: pa.Array, switches: tuple[pa.Array, pa.Array, pa.Array, pa.Array], fn,
                     out_type: pa.DataType, what: str) -> pa.Array:
    """fn(texts, clean, chinese, strip, lower) per group of rows with the same BERT switches (usually
    one group: the switches are constants), grouped as one small integer per row."""
    if any(s.null_count for s in switches):
        raise ValueError(f"{what}: the switches must not be NULL (strip_accents NULL is the "
                         "bert_normalize macro's default: it follows lowercase)")
    clean, chinese, strip, lower = switches
    key = pc.add(pc.add(pc.multiply(clean.cast(pa.int8()), 8), pc.multiply(chinese.cast(pa.int8()), 4)),
                 pc.add(pc.multiply(strip.cast(pa.int8()), 2), lower.cast(pa.int8())))

    def run(k: int, t: pa.Array) -> pa.Array:
        return fn(t, bool(k & 8), bool(k & 4), bool(k & 2), bool(k & 1))

    return by_model(key, texts, run, out_type)


def _bert_normalize(texts: pa.Array, clean: pa.Array, chinese: pa.Array, strip: pa.Array,
                    lower: pa.Array) -> pa.Array:
    return by_bert_switches(texts, (clean, chinese, strip, lower),
                            lambda t, *switches: bert_normalize_arrow(t, *switches, default_threads()),
                            pa.string(), "bert_normalize")


def register(con: duckdb.DuckDBPyConnection) -> None:
    varchar, boolean = duckdb.sqltype("VARCHAR"), duckdb.sqltype("BOOLEAN")
    define(con, "normalize", _normalize, [varchar, varchar], varchar)
    define(con, "sqltok_bert_normalize", _bert_normalize, [varchar, boolean, boolean, boolean, boolean], varchar)
