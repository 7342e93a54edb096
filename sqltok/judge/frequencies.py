"""Which tokens a corpus uses: the token distribution, the tokens it never or seldom uses (candidates
for under-trained tokens) and how finely terms are split; `sql/judge_macros.sql` does the work."""
from __future__ import annotations

from typing import Sequence

import duckdb
import pyarrow as pa

from sqltok.corpus.sources import Source, quote_literal
from sqltok.duck import arrow_table
from sqltok.judge.metrics import documents_query, tokenizer_names


def token_frequencies(con: duckdb.DuckDBPyConnection, tokenizer: str, source: Source) -> pa.Table:
    """id, token (bytes), text, n, share and rank of every token `tokenizer` uses on `source`."""
    (name,) = tokenizer_names(con, [tokenizer])
    return arrow_table(con, f"SELECT * FROM sqltok_token_frequencies({quote_literal(name)}, "
                            f"{quote_literal(documents_query(con, source))})")


def unused_tokens(con: duckdb.DuckDBPyConnection, tokenizer: str, source: Source, factor: float = 10) -> pa.Table:
    """Tokens `source` never uses, or (stored models) uses fewer than 1/factor of the times their
    training count promises: candidates for under-trained tokens."""
    (name,) = tokenizer_names(con, [tokenizer])
    return arrow_table(con, f"SELECT * FROM sqltok_unused_tokens({quote_literal(name)}, "
                            f"{quote_literal(documents_query(con, source))}, factor := {float(factor)!r})")


def fragmentation(con: duckdb.DuckDBPyConnection, tokenizers: Sequence[str], terms: Sequence[str]) -> pa.Table:
    """tokenizer, term, n_tokens and pieces of every term, most fragmented first."""
    names = tokenizer_names(con, tokenizers)
    toks = "[" + ", ".join(quote_literal(n) for n in names) + "]"
    con.execute("CREATE OR REPLACE TEMP TABLE sqltok_judge_terms (term VARCHAR)")
    con.executemany("INSERT INTO sqltok_judge_terms VALUES (?)", [[t] for t in terms])
    try:
        return arrow_table(con, f"SELECT * FROM sqltok_fragmentation({toks}, 'SELECT term FROM sqltok_judge_terms')")
    finally:
        con.execute("DROP TABLE sqltok_judge_terms")
