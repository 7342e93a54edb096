"""Supermerge candidates (paper section 2): each document's maximal runs of two or more pretokens
that the phase-1 model encodes to one token holding a letter, counted from the corpus
(`training.counting`) as keys (their phase-1 token ids as int32 bytes), turned into lists of ids
where SQL splits them, and cut again for a smaller phase-1 model. Counted right after
phase 1, the units are looked up by pretoken in what phase 1 made of each (`PretokenUnits`); the
cluster's tasks, which have the phase-1 model only, encode with it (`candidate_units`)."""
from __future__ import annotations

import uuid
from dataclasses import replace

import duckdb
import pyarrow as pa

from sqltok.bpe._candidates import PretokenUnits
from sqltok.bpe.model import Model
from sqltok.bpe.candidates import letter_mask, token_letters
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.duck import column
from sqltok.errors import SqltokError
from sqltok.sql_files import sql_text
from sqltok.training.counting import Counts, Units, count_units, counted
from sqltok.training.work_tables import WorkTables

PHASE1_TOKENIZER = "__sqltok_phase1"   # the prefix of the names the SQL extractor knows phase-1 models by
PHASE1_UNITS = "__sqltok_units"        # the prefix of the names it knows phase-1 runs' PretokenUnits by
_phase1_units: dict[str, PretokenUnits] = {}


def candidate_units(tokenizer: str, counts: str = "sqltok_candidate_counts") -> Units:
    """Candidates as `sqltok_candidates` finds them with the named phase-1 tokenizer, counted and
    stored by their keys (SQL function `counts` of the name and the text: each batch's distinct keys
    with their counts, long documents read in pieces; see `Counts.keys`)."""
    return Units("candidate", f"{counts}('{tokenizer}', text)", None, weighted=True)


def count_candidates(con: duckdb.DuckDBPyConnection, query: str, p1_tokens: pa.Array, pretokens: pa.Table,
                     singles: pa.Array, script_aware: bool, work: WorkTables) -> Counts:
    """Count the candidates of `query`'s documents under the phase-1 model of `p1_tokens` (bytes by
    id), just trained on `pretokens` (those documents' pretoken counts, pretokenized per script when
    `script_aware`), which it merged into `singles` (see `_train.train_bpe`), as keys (`Counts.keys`:
    what phase 2 reads as it is, without a list per candidate)."""
    name = f"{PHASE1_UNITS}_{uuid.uuid4().hex}"  # runs on other cursors of the instance count at once
    _phase1_units[name] = PretokenUnits(column(pretokens, 0), singles, token_letters(p1_tokens), script_aware)
    try:
        counts = count_units(con, query, candidate_units(name, "sqltok_pretoken_candidate_counts"),
                             work.table("candidate_counts"))
        return replace(counts, keys=True)
    finally:
        del _phase1_units[name]


def candidate_lists(con: duckdb.DuckDBPyConnection, candidates: Counts, work: WorkTables) -> Counts:
    """`candidates` with lists of ids (what SQL splits), made from their keys when they are keys."""
    if not candidates.keys:
        return candidates
    target = work.table("candidate_lists")
    con.execute(f"CREATE TEMP TABLE {target} AS SELECT sqltok_candidate_ids(candidate) AS candidate, n "
                f"FROM {candidates.table}")
    return replace(candidates, table=target, keys=False)


def phase1_units(name: str) -> PretokenUnits:
    """The `PretokenUnits` that `count_candidates` registered as `name`."""
    try:
        return _phase1_units[name]
    except KeyError:
        raise SqltokError(f"sqltok_pretoken_candidate_counts: no phase-1 run is known as {name!r}") from None


def eligible_ids(p1: Model) -> pa.Array:
    """The token ids of `p1` a candidate unit may be: text holding a letter that `p1` encodes to
    exactly that one token."""
    tok = BPETokenizer.from_model(p1, PHASE1_TOKENIZER)
    texts = pa.array([t.decode("utf-8", "replace") for t in p1.tokens], pa.large_string())
    letters = letter_mask(tok)
    encoded = tok.encode_arrow(texts).to_pylist()
    return pa.array([t for t, ids in enumerate(encoded) if letters[t] and ids == [t]], pa.int32())


def resplit_candidates(con: duckdb.DuckDBPyConnection, source: str, p1: Model, work: WorkTables,
                       role: str) -> Counts:
    """The candidates of table `source`, found with a phase-1 model whose tokens begin with `p1`'s,
    cut where a unit is not eligible under `p1` (its eligible units are a subset), into the work
    table for `role`."""
    target = work.table(role)
    eligible = work.view("eligible_units", pa.table({"unit": eligible_ids(p1)}))
    con.execute(sql_text("resplit_candidates").format(source=source, target=target, eligible=eligible))
    return counted(con, target, "candidate")
