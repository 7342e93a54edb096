"""The metrics table: compression, fertility, document lengths, vocabulary use and the Shannon and
Rényi efficiencies of several tokenizers over one corpus, per group, computed by the
`sqltok_evaluate` macro (`sql/judge_macros.sql`) over the token ids."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Sequence

import duckdb
import pyarrow as pa

from sqltok.corpus.columns import (TEXT_KEY_HINT, require_columns, require_text_column, typed_rows_query,
                                   varchar_text)
from sqltok.corpus.sources import Source, quote_ident, quote_literal
from sqltok.duck import arrow_table
from sqltok.errors import ModelNotFoundError, SqltokError
from sqltok.interrupts import interruptible
from sqltok.named_tokenizers import named_tokenizers
from sqltok.register import register
from sqltok.store import model_names

#: The keys `sqltok evaluate --json` promises on every line (scripts rely on them).
CONTRACT_KEYS = ("tokenizer", "group", "documents", "bytes", "tokens", "bytes_per_token", "fertility",
                 "renyi_efficiency", "shannon_efficiency", "vocab_utilization")
NO_TOKENS = "no tokens in this group (its documents are empty): ratios over tokens are null (NaN)"


def tokenizer_names(con: duckdb.DuckDBPyConnection, tokenizers: Sequence[str]) -> list[str]:
    """The names `con` knows `tokenizers` by: a path to a tokenizer file is loaded under its file
    name (`o200k_base.tiktoken` -> `o200k_base`), anything else must be a loaded or stored model
    (the error lists the known ones)."""
    if not tokenizers:
        raise SqltokError("give at least one tokenizer: a stored model's name or a tokenizer file")
    register(con)
    reg = named_tokenizers(con)
    names = []
    for t in tokenizers:
        if os.path.isfile(t):
            names.append(reg.load(_stem(t), t).name)
        else:
            try:
                reg.get(t)
            except ModelNotFoundError as e:
                models = model_names(con)
                raise ModelNotFoundError(f"{e}; models in the database: {', '.join(models) if models else 'none'}; "
                                         f"and {t!r} is no tokenizer file") from None
            names.append(t)
    if len(set(names)) != len(names):
        raise SqltokError(f"two tokenizers share a name: {names}")
    return names


def _stem(path: str) -> str:
    """`tokenizer.json` is named by its folder (`gpt2/tokenizer.json` -> `gpt2`), other files by their stem."""
    p = Path(path)
    return p.parent.name if p.name == "tokenizer.json" and p.parent.name else p.name.split(".")[0]


def documents_query(con: duckdb.DuckDBPyConnection, source: Source, by: str | None = None) -> str:
    """A query with the source's texts as VARCHAR `text` (see `varchar_text`) and, when `by` is given,
    that column as well."""
    if by is None:
        require_text_column(con, source)
        q = source.query()
    else:
        require_columns(con, source, {source.text_key: TEXT_KEY_HINT, by: "to group by"})
        rows = typed_rows_query(con, source)
        q = f"SELECT {quote_ident(source.text_key)} AS text, {quote_ident(by)} FROM ({rows})"
    return varchar_text(con, source, q)


@interruptible
def evaluate(con: duckdb.DuckDBPyConnection, tokenizers: Sequence[str], source: Source, by: str | None = None,
             alpha: float = 2.5, reference: str | None = None) -> pa.Table:
    """One row per tokenizer over all documents (`group` NULL), then one per tokenizer and group (the
    column `by`, or each document's dominant Unicode script). See `sqltok_evaluate` for the columns;
    the efficiencies divide by log2 of the tokenizer's vocabulary size."""
    if not 0 < alpha < math.inf:
        raise SqltokError(f"the Rényi order alpha must be positive and finite, not {alpha}")
    names = tokenizer_names(con, tokenizers)
    q = documents_query(con, source, by)
    if con.execute(f"SELECT count(text) FROM ({q})").fetchall()[0][0] == 0:
        raise SqltokError("the corpus has no documents (no non-NULL text)")
    toks = "[" + ", ".join(quote_literal(n) for n in names) + "]"
    args = [toks, quote_literal(q), f"alpha := {float(alpha)!r}"]
    if by is not None:
        args.append(f'"by" := {quote_literal(by)}')
    if reference is not None:
        args.append(f"reference := {quote_literal(reference)}")
    table = arrow_table(con, f"SELECT * FROM sqltok_evaluate({', '.join(args)})")
    groups = set(table.column("group").drop_null().to_pylist())
    if reference is not None and reference not in groups:
        raise SqltokError(f"no group {reference!r} to compare with; the groups: {', '.join(sorted(groups))}")
    return table


def records(table: pa.Table) -> list[dict]:
    """The rows as dicts, NaN as None, with a `note` where a group has no tokens."""
    out = []
    for row in table.to_pylist():
        row = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
        if row["tokens"] == 0:
            row["note"] = NO_TOKENS
        out.append(row)
    return out
