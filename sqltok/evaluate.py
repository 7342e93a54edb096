"""Held-back evaluation: split a source by hash, then measure a model's compression on the held part."""
from __future__ import annotations

import duckdb

from sqltok.corpus.sources import Source
from sqltok.corpus.split import split_query
from sqltok.register import register
from sqltok.store import require_model


def holdout_split(src: Source, fraction: float) -> tuple[Source, Source]:
    """(training source, held-back source): about `fraction` of the documents are held back, by the
    split of `sqltok prepare --valid`."""
    q = src.query()
    name = src.describe()  # not the split's query: the model records it and errors name it
    return (Source(sql=split_query(q, fraction, held=False), label=f"{name} without {fraction:g} held back"),
            Source(sql=split_query(q, fraction, held=True), label=f"{name}, {fraction:g} held back"))


def compression(con: duckdb.DuckDBPyConnection, model: str, source: Source) -> dict:
    """Documents, bytes, tokens and bytes per token of `model` on `source`'s documents."""
    register(con)
    require_model(con, model)
    docs, nbytes, tokens = con.execute(
        f"SELECT count(text) FILTER (WHERE text <> ''), coalesce(sum(strlen(text)), 0), "
        f"coalesce(sum(token_count(?, text)), 0) FROM ({source.query()})", [model]).fetchall()[0]
    return {"documents": docs, "bytes": nbytes, "tokens": tokens,
            "bytes_per_token": nbytes / tokens if tokens else float("nan")}
