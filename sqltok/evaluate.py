"""Held-back evaluation: split a source by hash, then measure a model's compression on the held part."""
from __future__ import annotations

import duckdb

from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.register import register
from sqltok.sql_files import sql_text
from sqltok.store import require_model


def holdout_split(src: Source, fraction: float) -> tuple[Source, Source]:
    """(training source, held-back source): about `fraction` of the documents are held back."""
    if not 0.0 < fraction < 1.0:
        raise SqltokError(f"the held-back fraction must be between 0 and 1, not {fraction}")
    cut = int(round(fraction * 10000))
    q = src.query()
    train, held = (Source(sql=sql_text("holdout").format(source=q, keep=k, cut=cut)) for k in ("train", "held"))
    return train, held


def compression(con: duckdb.DuckDBPyConnection, model: str, source: Source) -> dict:
    """Documents, bytes, tokens and bytes per token of `model` on `source`'s documents."""
    register(con)
    require_model(con, model)
    docs, nbytes, tokens = con.execute(
        f"SELECT count(text) FILTER (WHERE text <> ''), coalesce(sum(strlen(text)), 0), "
        f"coalesce(sum(token_count(?, text)), 0) FROM ({source.query()})", [model]).fetchall()[0]
    return {"documents": docs, "bytes": nbytes, "tokens": tokens,
            "bytes_per_token": nbytes / tokens if tokens else float("nan")}
