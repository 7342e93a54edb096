"""Training curves of stored models: merge counts against merge index (the superword paper's
Figure 10) and type-token ratios of pretokens and candidates by group (its Figures 2 and 9)."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from sqltok.corpus.sources import Source, quote_literal
from sqltok.duck import arrow_table
from sqltok.judge.metrics import documents_query
from sqltok.register import register
from sqltok.store import require_model


def merge_curve(con: duckdb.DuckDBPyConnection, model: str) -> pa.Table:
    """kind ('regular' or 'super'), idx, count and token of every merge of a stored model."""
    register(con)
    require_model(con, model)
    return arrow_table(con, f"SELECT * FROM sqltok_merge_curve({quote_literal(model)})")


def group_type_token_ratios(con: duckdb.DuckDBPyConnection, source: Source, by: str | None = None,
                            model: str | None = None) -> pa.Table:
    """group, unit ('pretokens', and 'candidates' of the phase-1 model `model` when given),
    unique_count, total and type_token_ratio of `source`'s documents."""
    register(con)
    if model is not None:
        require_model(con, model)
    args = [quote_literal(documents_query(con, source, by))]
    if by is not None:
        args.append(f'"by" := {quote_literal(by)}')
    if model is not None:
        args.append(f"model := {quote_literal(model)}")
    return arrow_table(con, f"SELECT * FROM sqltok_group_type_token_ratios({', '.join(args)})")
