"""Byte-level BPE training inside DuckDB, as stages: prepare the corpus, count its pretokens
(`GROUP BY` over the Cython pretokenizer's output), merge (the Cython merge loop over the unique
pretokens), store (the model's rows in one transaction, so a failed or interrupted run leaves the
database as it was). The run's work tables are dropped however it ends.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pyarrow as pa

from sqltok.arrow_memory import arrow_on_malloc
from sqltok.bpe._train import train_bpe as _merge_loop
from sqltok.bpe.model import Merge, Model
from sqltok.interrupts import interruptible
from sqltok.training.on_cluster import cluster_counting
from sqltok.bpe.settings import (DEFAULT_SPECIAL_TOKENS, check_special_tokens, check_vocab_size, reference_settings,
                                 special_token_ids)
from sqltok.corpus.sources import Source
from sqltok.duck import column
from sqltok.errors import SqltokError
from sqltok.progress import Progress
from sqltok.register import register
from sqltok.store import (ModelRows, check_new_name, delete_rows, ensure_schema, merge_table, save_model_rows,
                          save_pretoken_counts, token_table, transaction)
from sqltok.training.background import Background
from sqltok.training.collector import collector_paused
from sqltok.training.counting import count_corpus
from sqltok.training.stopwatch import Stopwatch
from sqltok.training.work_tables import WorkTables


@dataclass
class TrainReport:
    """What a training run did: the corpus it saw and the time each stage took (seconds)."""

    model: str
    documents: int
    null_documents: int
    empty_documents: int
    bytes: int
    unique_pretokens: int
    merges: int
    vocab_size: int
    seconds: dict[str, float] = field(default_factory=dict)


#: The merge loop's arrays that describe the merges, in merge order.
MERGE_COLUMNS = ("left", "right", "count", "flag", "new_id")


def learn_merges(counts: pa.Table, vocab_size: int, script_aware: bool, special_tokens=DEFAULT_SPECIAL_TOKENS,
                 progress: bool = False, label: str = "merging", cancel: threading.Event | None = None) -> Model:
    """Phase 1: the byte-level BPE model of `counts` (an Arrow table of pretoken, n) with `vocab_size`
    tokens, by the Cython merge loop (no DuckDB: it may run on a thread of its own); `cancel`, when
    set by another thread, stops it with SqltokError."""
    return merges_model(merge_pretokens(counts, vocab_size, progress, label, cancel), script_aware, special_tokens)


def merge_pretokens(counts: pa.Table, vocab_size: int, progress: bool = False, label: str = "merging",
                    cancel: threading.Event | None = None) -> dict[str, pa.Array]:
    """The Cython merge loop's arrays for `counts` (see `_train.train_bpe`: the merges, the
    vocabulary, and what each pretoken became), with a progress bar and `cancel` as `learn_merges`."""
    bar = Progress(label, vocab_size - 243, "merges") if progress else None

    def report(done: int, size: int) -> None:
        if cancel is not None and cancel.is_set():
            raise SqltokError("merging cancelled")
        if bar is not None:
            bar.update(done)

    out = _merge_loop(column(counts, 0), column(counts, 1), vocab_size,
                      progress=report if bar is not None or cancel is not None else None)
    if bar is not None:
        bar.close()
    return out


def merges_model(out: dict[str, pa.Array], script_aware: bool, special_tokens=DEFAULT_SPECIAL_TOKENS) -> Model:
    """The phase-1 `Model` of the merge loop's arrays `out`."""
    with collector_paused():
        tokens = out["tokens"].to_pylist()
        return Model(
            method="word",
            tokens=tokens,
            token_counts=out["token_counts"].to_pylist(),
            is_super=[False] * len(tokens),
            merges=[Merge(*m) for m in zip(*(out[k].to_pylist() for k in MERGE_COLUMNS))],
            settings=reference_settings(script_aware=script_aware),
            special_tokens=special_token_ids(len(tokens), special_tokens),
        )


def merges_rows(out: dict[str, pa.Array], script_aware: bool, special_tokens=DEFAULT_SPECIAL_TOKENS) -> ModelRows:
    """The rows of the byte-level BPE model of the merge loop's arrays `out` (what `merges_model`
    then `store.model_rows` give, without a Python object per token and merge)."""
    n_tokens = len(out["tokens"])
    return ModelRows("word", reference_settings(script_aware=script_aware), None,
                     token_table(out["tokens"], out["token_counts"], np.zeros(n_tokens, dtype=bool)),
                     merge_table(False, out["left"], out["right"], out["new_id"], out["count"], out["flag"]),
                     special_token_ids(n_tokens, special_tokens))


@interruptible
def train_bpe(con: duckdb.DuckDBPyConnection, source: Source | str, vocab_size: int, model: str, *,
              simple: bool = False, special_tokens=DEFAULT_SPECIAL_TOKENS, replace: bool = False,
              progress: bool = False, cluster=None) -> TrainReport:
    """Train a byte-level BPE model named `model` on `source` (a SQL query with a `text` column, or a
    `Source`) and store it in `con`'s database. `simple=True` skips script splitting. With `cluster`
    (a dask client or a `sqltok.cluster.Cluster`), a file source is counted on the cluster.

    Identical to the reference implementation: same merges, counts, flags and token ids.
    """
    check_vocab_size(vocab_size)
    special_tokens = check_special_tokens(special_tokens)
    register(con)
    ensure_schema(con)
    check_new_name(con, model, replace)
    watch = Stopwatch(con if progress else None)
    with WorkTables(con) as work, arrow_on_malloc():
        with watch("pretokenize_and_count"):
            counts = count_corpus(con, source, not simple, work) if cluster is None else \
                cluster_counting().count_corpus_on(cluster, con, source, not simple, work, watch, progress)
        with watch("merge"):
            pretokens = counts.pretokens.arrow(con)
        # The merge loop (Cython, GIL released) runs on one core while DuckDB stores the counts.
        with transaction(con), Background(merge_pretokens, pretokens, vocab_size, progress) as job:
            del pretokens  # the loop holds what it reads
            with watch("store"):
                delete_rows(con, model)
                save_pretoken_counts(con, model, counts.pretokens.table)
            rows = merges_rows(job.result(), not simple, special_tokens)
            watch.seconds["merge"] += job.seconds
            with watch("store"):
                save_model_rows(con, model, rows, counts.stats.model_info())
    stats = counts.stats
    return TrainReport(model, stats.documents, stats.null_documents, stats.empty_documents, stats.bytes,
                       counts.pretokens.unique, rows.merges.num_rows, rows.tokens.num_rows, watch.seconds)
