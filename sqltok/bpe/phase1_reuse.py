"""Reuse of a stored two-phase model's counts (`phase1=`): its pretoken counts and candidates stand
in for a corpus pass. The candidates are ids of the phase-1 vocabulary stored with them; a phase-1
model trained again on the same pretoken counts to no more tokens begins with the same tokens, so
the ids hold as they are and only units that are no longer eligible cut the candidates."""
from __future__ import annotations

import duckdb

from sqltok.bpe.candidate_counts import resplit_candidates
from sqltok.bpe.model import Model
from sqltok.errors import SqltokError
from sqltok.store import load_phase1_tokens, require_model
from sqltok.training.corpus import CorpusStats
from sqltok.training.counting import CorpusCounts, Counts, counted
from sqltok.training.work_tables import WorkTables


def reuse_pretoken_counts(con: duckdb.DuckDBPyConnection, name: str, target: int, work: WorkTables) -> CorpusCounts:
    """Copy the pretoken counts of stored model `name` into a work table, for a phase 1 of `target`
    tokens (at most the phase-1 size its candidates were extracted with)."""
    require_model(con, name)
    row = con.execute("SELECT source, documents, null_documents, empty_documents, bytes, script_aware, "
                      "phase1_vocab_size FROM sqltok_store.models WHERE model = ?", [name]).fetchall()[0]
    if row[6] is None:
        raise SqltokError(f"model {name!r} holds no supermerge candidates (train it with a superword method)")
    if row[6] < target:
        raise SqltokError(f"model {name!r} has candidates for a phase-1 vocabulary of {row[6]} tokens; this "
                          f"run needs {target}: train on the corpus instead")
    table = work.table("pretoken_counts")
    con.execute(f"CREATE TEMP TABLE {table} AS "
                "SELECT pretoken, n FROM sqltok_store.pretoken_counts WHERE model = ?", [name])
    return CorpusCounts(CorpusStats(*row[:5]), row[5], counted(con, table, "pretoken"), None)


def reuse_candidates(con: duckdb.DuckDBPyConnection, name: str, p1: Model, work: WorkTables) -> Counts:
    """The stored candidates of model `name` for phase-1 model `p1` (trained on its pretoken counts)."""
    if load_phase1_tokens(con, name)[:len(p1.tokens)] != p1.tokens:
        raise SqltokError(f"the phase-1 model of {name!r}'s pretoken counts is not the one its candidates "
                          "were extracted with (were its counts changed?): train on the corpus instead")
    stored = work.table("stored_candidates")
    con.execute(f"CREATE TEMP TABLE {stored} AS "
                "SELECT candidate, n FROM sqltok_store.candidate_counts WHERE model = ?", [name])
    return resplit_candidates(con, stored, p1, work, "candidate_counts")
