"""`encode`, `decode`, `token_count`, `tokens`, `token_bytes` and `sqltok_load` (the macro over `sqltok_load_file`) in SQL, over Arrow batches.

The first argument names a tokenizer (one loaded with `sqltok_load` or a model in the database).
Special-token text is ordinary text in `encode` and `token_count`; `encode_special` matches every
special token; `encode_checked` raises when special-token text appears. `decode` keeps each family's
default for special tokens (as `Tokenizer.decode`); `decode_special` writes them as their text and
`decode_ordinary` leaves them out (HF's `skip_special_tokens` False and True: DuckDB's Python UDFs
take no overloads or named arguments, and a macro named `decode` would hide DuckDB's own). The
decoders take any list of ids sqltok writes (INTEGER[], UINTEGER[], USMALLINT[]) and BIGINT[].
"""
from __future__ import annotations

import re

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.named_tokenizers import named_tokenizers

from .by_model import by_model
from .define import define


IDS = pa.large_list(pa.int32())  # what the encoders return; DuckDB reads it as INTEGER[] without a cast


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar, integer = duckdb.sqltype("VARCHAR"), duckdb.sqltype("INTEGER")
    ids_type = duckdb.list_type(integer)
    # decode's ids: BIGINT[], to which DuckDB casts every list sqltok writes (INTEGER[], UINTEGER[],
    # USMALLINT[]) implicitly (a Python UDF has one signature; UINTEGER[] is no INTEGER[]); the decoder
    # reads them as int64, without a cast back (`decode_arrow`)
    any_ids = duckdb.list_type(duckdb.sqltype("BIGINT"))

    def encode_with(allowed):
        def run(names, texts):
            return by_model(names, texts, lambda n, t: reg.get(n).encode_arrow(t, allowed), IDS)
        return run

    def encode_checked(names, texts):
        def run(n, t):
            tok = reg.get(n)
            specials = sorted(tok.special_tokens_set)
            if specials:  # one regex pass over the batch for all special tokens
                hit = pc.match_substring_regex(t, "|".join(re.escape(x) for x in specials)).fill_null(False)
                if pc.any(hit).as_py():  # (which row of the query, a UDF that sees one vector cannot tell)
                    found = next(x for x in specials if x in t[pc.index(hit, True).as_py()].as_py())
                    raise ValueError(f"encode_checked: a text holds the special token {found!r}; use "
                                     "encode_special to match special tokens or encode to treat them as text")
            return tok.encode_arrow(t)
        return by_model(names, texts, run, IDS)

    def token_count(names, texts):
        return by_model(names, texts, lambda n, t: reg.get(n).encode_arrow(t, counts_only=True), pa.int64())

    def decode_with(skip_special_tokens):
        def run(names, ids):
            return by_model(names, ids, lambda n, i: reg.get(n).decode_arrow(
                i, skip_special_tokens=skip_special_tokens).cast(pa.string()), pa.string())
        return run

    def tokens(names, texts):
        return by_model(names, texts, lambda n, t: reg.get(n).tokens_arrow(t).cast(pa.list_(pa.string())),
                         pa.list_(pa.string()))

    def token_bytes(names, texts):
        return by_model(names, texts, lambda n, t: reg.get(n).token_bytes_arrow(t).cast(pa.list_(pa.binary())),
                        pa.list_(pa.binary()))

    def load(names, paths, patterns):
        out = []
        for name, path, pattern in zip(names.to_pylist(), paths.to_pylist(), patterns.to_pylist()):
            if name is None or path is None:
                out.append(None)
                continue
            tok = reg.load(name, path, pattern)
            out.append(f"{name}: {tok.n_vocab} tokens")
        return pa.array(out, pa.string())

    define(con, "encode", encode_with(()), [varchar, varchar], ids_type)
    define(con, "encode_special", encode_with("all"), [varchar, varchar], ids_type)
    define(con, "encode_checked", encode_checked, [varchar, varchar], ids_type)
    define(con, "token_count", token_count, [varchar, varchar], duckdb.sqltype("BIGINT"))
    define(con, "decode", decode_with(None), [varchar, any_ids], varchar)
    define(con, "decode_special", decode_with(False), [varchar, any_ids], varchar)
    define(con, "decode_ordinary", decode_with(True), [varchar, any_ids], varchar)
    define(con, "tokens", tokens, [varchar, varchar], duckdb.list_type(varchar))
    define(con, "token_bytes", token_bytes, [varchar, varchar], duckdb.list_type(duckdb.sqltype("BLOB")))
    define(con, "sqltok_load_file", load, [varchar, varchar, varchar], varchar, side_effects=True)
