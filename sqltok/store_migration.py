"""Bring a model store an earlier sqltok wrote up to the current schema (`store.ensure_schema` runs
this on every connection; a store that is up to date costs one catalog query).

Supermerge candidates used to be kept as pretoken text; they are now ids of the phase-1 vocabulary
they were extracted with, kept beside them (`sqltok_store.phase1_tokens`). That vocabulary is not
in an old store, but the phase-1 model is a function of what is: phase 1 is trained again, once,
from the model's stored pretoken counts to its recorded phase-1 size (the same merge loop, so the
same tokens). Everything runs in one transaction: an interrupted migration leaves the old store.
"""
from __future__ import annotations

import pyarrow as pa

from sqltok.bpe._train import train_bpe as merge_loop
from sqltok.duck import arrow_table, column, insert_arrow, transaction
from sqltok.errors import SqltokError
from sqltok.sql_files import run_script


def migrate(con) -> None:
    """Convert candidates kept as text to phase-1 token ids (a no-op on a current store)."""
    kind = con.execute("SELECT data_type FROM duckdb_columns() WHERE schema_name = 'sqltok_store' "
                       "AND table_name = 'candidate_counts' AND column_name = 'candidate'").fetchall()
    if kind != [("VARCHAR[]",)]:
        return
    with transaction(con):
        # Candidates of a model that never recorded its phase-1 size cannot be interpreted: not kept.
        con.execute("DELETE FROM sqltok_store.candidate_counts WHERE model NOT IN "
                    "(SELECT model FROM sqltok_store.models WHERE phase1_vocab_size IS NOT NULL)")
        for name, size in con.execute(
                "SELECT model, phase1_vocab_size FROM sqltok_store.models WHERE model IN "
                "(SELECT DISTINCT model FROM sqltok_store.candidate_counts) ORDER BY model").fetchall():
            _save_phase1_tokens(con, name, size)
        run_script(con, "migrate_candidates")
        lost = con.execute("SELECT any_value(model), count(*) FROM sqltok_store.candidate_counts "
                           "WHERE list_count(candidate) < len(candidate)").fetchall()[0]
        if lost[1]:
            raise SqltokError(f"cannot convert the supermerge candidates of model {lost[0]!r}: some are not "
                              "tokens of the phase-1 model its pretoken counts give (drop or retrain it)")


def _save_phase1_tokens(con, name: str, size: int) -> None:
    """Train model `name`'s phase 1 again from its stored pretoken counts and keep its tokens."""
    counts = arrow_table(con, "SELECT pretoken, n FROM sqltok_store.pretoken_counts WHERE model = ?", [name])
    tokens = merge_loop(column(counts, 0), column(counts, 1), size)["tokens"]
    insert_arrow(con, "sqltok_store.phase1_tokens", name,
                 pa.table({"id": pa.array(range(len(tokens)), pa.int32()), "token": tokens}))
