"""The corpus preparation functions in SQL, over Arrow batches: `detect_language`, `language_of`,
`script_shares`, `find_pii`, `sqltok_pii_masked` (behind the `mask_pii` and `mask_*` macros of
`sql/prepare_macros.sql`), `minhash` and `text_fingerprint` (behind the dedup macros of
`sql/prepare_dedup.sql`) and `sqltok_decode_utf8`; and the table macros of the split and balance."""
from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.threads import default_threads
from sqltok.corpus.dedup import permutations
from sqltok.corpus.language import language_arrays
from sqltok.corpus.pii import PLACEHOLDERS, check_kinds, find_pii_arrow, masked
from sqltok.corpus.scripts import script_shares_array
from sqltok.corpus._minhash import fingerprint_arrow, minhash_arrow
from sqltok.sql_files import run_script

from .define import define

LANGUAGE = pa.struct([("lang", pa.string()), ("confidence", pa.float64())])
MASKED = pa.struct([("text", pa.string()), ("kinds", pa.list_(pa.string()))])
FINDS = pa.list_(pa.struct([("kind", pa.string()), ("start", pa.int32()), ("end", pa.int32())]))


def _whole(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array, string views as large strings (pyarrow's compute kernels take no views)."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    return arr.cast(pa.large_string()) if pa.types.is_string_view(arr.type) else arr


def _detect_language(texts: pa.Array) -> pa.Array:
    return language_arrays(_whole(texts), default_threads())[0]


def _language_of(texts: pa.Array) -> pa.Array:
    texts = _whole(texts)
    codes, confidence = language_arrays(texts, default_threads())
    return pa.StructArray.from_arrays([codes, confidence], fields=list(LANGUAGE), mask=pc.is_null(texts))


def _script_shares(texts: pa.Array) -> pa.Array:
    return script_shares_array(_whole(texts), default_threads())


def _constant(arr: pa.Array, what: str):
    """The one value of a column that must be the same in every row (a setting, not data)."""
    arr = _whole(arr)
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):  # no unique kernel for lists
        values = [v for i, v in enumerate(arr.to_pylist()) if i == 0 or v != arr[0].as_py()]
    else:
        values = pc.unique(arr).to_pylist()
    if len(values) != 1 or values[0] is None:
        raise ValueError(f"{what} must be one constant, not NULL, in a query")
    return values[0]


def _find_pii(texts: pa.Array) -> pa.Array:
    return pa.array([None if finds is None else [(f.kind, f.start, f.end) for f in finds]
                     for finds in find_pii_arrow(_whole(texts))], FINDS)


def _pii_masked(texts: pa.Array, kinds: pa.Array, placeholders: pa.Array) -> pa.Array:
    """{text: masked, kinds: the kind of each find} per row."""
    texts = _whole(texts)
    wanted, marks = _constant(kinds, "the PII kinds"), _constant(placeholders, "the placeholders")
    if len(wanted) != len(marks):
        raise ValueError("give one placeholder per PII kind")
    check_kinds(wanted)
    chosen = {**PLACEHOLDERS, **dict(zip(wanted, marks))}
    out, found = [], []
    for t, finds in zip(texts.to_pylist(), find_pii_arrow(texts, wanted)):
        out.append(masked(t, finds, chosen) if finds else t)
        found.append(None if finds is None else [f.kind for f in finds])
    return pa.StructArray.from_arrays([pa.array(out, pa.string()), pa.array(found, pa.list_(pa.string()))],
                                      fields=list(MASKED), mask=pc.is_null(texts))


def _text_fingerprint(texts: pa.Array) -> pa.Array:
    texts = _whole(texts)
    return pa.array(fingerprint_arrow(texts, default_threads()), pa.uint64(),
                    mask=pc.is_null(texts).to_numpy(zero_copy_only=False) if texts.null_count else None)


def _decode_utf8(blobs: pa.Array) -> pa.Array:
    """UTF-8 text of BLOBs, each invalid sequence replaced by U+FFFD."""
    return pa.array([None if b is None else b.decode("utf-8", "replace") for b in _whole(blobs).to_pylist()],
                    pa.string())


def _minhash(texts: pa.Array, num_perm: pa.Array, seed: pa.Array, ngram: pa.Array) -> pa.Array:
    texts = _whole(texts)
    a, b = permutations(_constant(num_perm, "num_perm"), _constant(seed, "the seed"))
    sig = minhash_arrow(texts, a, b, _constant(ngram, "the shingle size"), default_threads())
    flat = pa.array(sig.reshape(-1), pa.uint32())
    offsets = pa.array(np.arange(0, sig.size + 1, len(a), dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, flat, mask=pc.is_null(texts) if texts.null_count else None)


def register(con: duckdb.DuckDBPyConnection) -> None:
    varchar, integer, bigint = duckdb.sqltype("VARCHAR"), duckdb.sqltype("INTEGER"), duckdb.sqltype("BIGINT")
    define(con, "detect_language", _detect_language, [varchar], varchar)
    define(con, "language_of", _language_of, [varchar], duckdb.struct_type({"lang": varchar,
                                                                            "confidence": duckdb.sqltype("DOUBLE")}))
    define(con, "script_shares", _script_shares, [varchar],
           duckdb.list_type(duckdb.struct_type({"script": varchar, "share": duckdb.sqltype("DOUBLE")})))
    define(con, "find_pii", _find_pii, [varchar],
           duckdb.list_type(duckdb.struct_type({"kind": varchar, "start": integer, "end": integer})))
    define(con, "sqltok_pii_masked", _pii_masked, [varchar, duckdb.list_type(varchar), duckdb.list_type(varchar)],
           duckdb.struct_type({"text": varchar, "kinds": duckdb.list_type(varchar)}))
    define(con, "minhash", _minhash, [varchar, integer, bigint, integer],
           duckdb.list_type(duckdb.sqltype("UINTEGER")))
    define(con, "text_fingerprint", _text_fingerprint, [varchar], duckdb.sqltype("UBIGINT"))
    define(con, "sqltok_decode_utf8", _decode_utf8, [duckdb.sqltype("BLOB")], varchar)
    run_script(con, "prepare_macros")
    run_script(con, "prepare_dedup")
    run_script(con, "prepare_split")
    run_script(con, "prepare_balance")
