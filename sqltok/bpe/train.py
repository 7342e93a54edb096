"""Byte-level BPE training inside DuckDB: count pretokens with SQL, merge in Cython, store the model.

The stages: (1) corpus statistics and pretoken counts, `GROUP BY` over the Cython pretokenizer's
output (`sql/count_pretokens.sql`); (2) the Cython merge loop over the unique pretokens; (3) the model's
rows written in one transaction, so a failed or interrupted run leaves the database as it was.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import duckdb

from sqltok.bpe._train import train_bpe as _merge_loop
from sqltok.duck import arrow_table, column
from sqltok.corpus.sources import Source
from sqltok.errors import CorpusError
from sqltok.bpe.model import Merge, Model
from sqltok.progress import Progress
from sqltok.register import register
from sqltok.bpe.settings import DEFAULT_SPECIAL_TOKENS, check_vocab_size, reference_settings
from sqltok.sql_files import sql_text
from sqltok.store import check_new_name, delete_rows, ensure_schema, save_model, transaction


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


def as_source(source) -> Source:
    if isinstance(source, Source):
        return source
    if isinstance(source, str):
        return Source(sql=source)
    raise TypeError("source must be a SQL query string or a sqltok.Source")


def _text_query(con, src: Source) -> str:
    """The source's query with `text` as VARCHAR; BLOB text must be valid UTF-8."""
    query = src.query()
    try:
        types = {row[0]: row[1] for row in con.execute(f"DESCRIBE {query}").fetchall()}
    except duckdb.Error as e:
        raise CorpusError(f"cannot read the training source {src.describe()!r}: {e}") from None
    kind = types.get("text")
    if kind == "BLOB":
        bad = con.execute(sql_text("first_invalid_utf8").format(source=query)).fetchall()[0][0]
        if bad is not None:
            raise CorpusError(f"document {bad} of {src.describe()!r} is not valid UTF-8 "
                              "(clean or decode it before training)")
        return f"SELECT decode(text) AS text FROM ({query})"
    if kind != "VARCHAR":
        raise CorpusError(f"the text column of {src.describe()!r} is {kind}, not VARCHAR or BLOB")
    return query


def count_pretokens(con, query: str, script_aware: bool, target: str) -> None:
    """Create TEMP table `target(pretoken, n)` with the pretoken counts of `query`'s documents."""
    fn = "sqltok_pretokenize_script" if script_aware else "sqltok_pretokenize_simple"
    con.execute(f"DROP TABLE IF EXISTS {target}")
    con.execute(sql_text("count_pretokens").format(target=target, pretokenize=fn, source=query))


def prepare_corpus(con, src: Source) -> tuple[str, dict]:
    """The source's text query and its statistics (`documents`, `null_documents`, `empty_documents`,
    `bytes`, `source`); a source without text is an error."""
    query = _text_query(con, src)
    docs, nulls, empties, nbytes = con.execute(sql_text("corpus_stats").format(source=query)).fetchall()[0]
    if docs == 0:
        raise CorpusError(f"the training source {src.describe()!r} has no non-empty documents")
    return query, {"source": src.describe(), "documents": docs, "null_documents": nulls,
                   "empty_documents": empties, "bytes": nbytes}


def learn_merges(counts, vocab_size: int, script_aware: bool, special_tokens=DEFAULT_SPECIAL_TOKENS,
                 progress: bool = False, label: str = "merging") -> Model:
    """Phase 1: the byte-level BPE model of `counts` (an Arrow table of pretoken, n) with `vocab_size`
    tokens, by the Cython merge loop."""
    bar = Progress(label, vocab_size - 243, "merges") if progress else None
    out = _merge_loop(column(counts, 0), column(counts, 1), vocab_size,
                      progress=None if bar is None else (lambda done, size: bar.update(done)))
    if bar is not None:
        bar.close()
    tokens = out["tokens"].to_pylist()
    return Model(
        method="word",
        tokens=tokens,
        token_counts=out["token_counts"].to_pylist(),
        is_super=[False] * len(tokens),
        merges=[Merge(*m) for m in zip(out["left"].to_pylist(), out["right"].to_pylist(),
                                       out["count"].to_pylist(), out["flag"].to_pylist())],
        settings=reference_settings(script_aware=script_aware),
        special_tokens={s: len(tokens) + i for i, s in enumerate(special_tokens)},
    )


def train_bpe(con: duckdb.DuckDBPyConnection, source, vocab_size: int, model: str, *,
              simple: bool = False, special_tokens=DEFAULT_SPECIAL_TOKENS, replace: bool = False,
              progress: bool = False) -> TrainReport:
    """Train a byte-level BPE model named `model` on `source` (a SQL query with a `text` column, or a
    `Source`) and store it in `con`'s database. `simple=True` skips script splitting.

    Identical to the reference implementation: same merges, counts, flags and token ids.
    """
    check_vocab_size(vocab_size)
    src = as_source(source)
    register(con)
    ensure_schema(con)
    check_new_name(con, model, replace)
    seconds: dict[str, float] = {}
    tmp = "__sqltok_pretoken_counts"

    t0 = time.perf_counter()
    query, info = prepare_corpus(con, src)
    count_pretokens(con, query, not simple, tmp)
    counts = arrow_table(con, f"SELECT pretoken, n FROM {tmp}")
    seconds["pretokenize_and_count"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    result = learn_merges(counts, vocab_size, not simple, special_tokens, progress)
    seconds["merge"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    with transaction(con):
        delete_rows(con, model)
        save_model(con, model, result, info)
        con.execute(f"INSERT INTO sqltok_store.pretoken_counts SELECT ?, pretoken, n FROM {tmp}", [model])
    con.execute(f"DROP TABLE IF EXISTS {tmp}")
    seconds["store"] = time.perf_counter() - t0
    return TrainReport(model, info["documents"], info["null_documents"], info["empty_documents"], info["bytes"],
                       len(counts), len(result.merges), result.vocab_size, seconds)
