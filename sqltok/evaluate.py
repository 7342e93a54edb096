"""Held-back evaluation: split a source by hash, then measure a model's compression on the held part."""
from __future__ import annotations

import duckdb

from ._bpe_encode import count_tokens
from .duck import arrow_table, column
from .corpus import Source
from .errors import SqltokError
from .sql_files import sql_text
from .store import require_model
from .train import count_pretokens


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
    require_model(con, model)
    script_aware = con.execute("SELECT script_aware FROM sqltok_store.models WHERE model = ?", [model]).fetchall()[0][0]
    query = source.query()
    docs, nbytes = con.execute(f"SELECT count(text) FILTER (WHERE text <> ''), "
                               f"coalesce(sum(strlen(text)), 0) FROM ({query})").fetchall()[0]
    tmp = "__sqltok_eval_pretokens"
    count_pretokens(con, query, script_aware, tmp)
    try:
        pre = arrow_table(con, f"SELECT pretoken, n FROM {tmp}")
        mg = arrow_table(con, "SELECT left_id, right_id, new_id FROM sqltok_store.merges WHERE model = ? AND NOT is_super "
                         "ORDER BY idx", [model])
    finally:
        con.execute(f"DROP TABLE IF EXISTS {tmp}")
    tokens = count_tokens(column(pre, 0), column(pre, 1), column(mg, 0), column(mg, 1), column(mg, 2)) if len(pre) else 0
    return {"documents": docs, "bytes": nbytes, "tokens": tokens,
            "bytes_per_token": nbytes / tokens if tokens else float("nan")}
