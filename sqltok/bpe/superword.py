"""Superword training inside DuckDB: BoundlessBPE and SuperBPE with aggregated supermerge candidates.

The stages (paper sections 2-3, Appendix B): (1) pretoken counts, `GROUP BY` in SQL, as for BPE;
(2) the phase-1 BPE merges (Cython); (3) the supermerge candidates of every document, found by the
Cython extractor with the phase-1 model and counted with `GROUP BY` (`sql/candidate_counts.sql`);
(4) optionally the Apriori n-gram pruning and greedy split, one SQL query per n-gram length;
(5) phase 2 in Cython; (6) the model, its pretoken and candidate counts written in one transaction.
One phase-1 run serves both methods: SuperBPE "match" takes s from a BoundlessBPE phase 2 on the same
candidates, and `phase1=` reuses the counts a stored two-phase model holds instead of reading the
corpus again.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Literal

import duckdb
import pyarrow as pa

from sqltok.bpe._phase2 import train_phase2
from sqltok.duck import arrow_table
from sqltok.errors import SqltokError
from sqltok.bpe.model import Merge, Model
from sqltok.progress import Progress
from sqltok.register import register
from sqltok.named_tokenizers import named_tokenizers
from sqltok.bpe.settings import DEFAULT_SPECIAL_TOKENS, MIN_VOCAB_SIZE, check_vocab_size
from sqltok.sql_files import sql_text
from sqltok.store import check_new_name, delete_rows, ensure_schema, require_model, save_model, transaction
from sqltok.bpe.candidates import letter_mask
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.bpe.train import as_source, count_pretokens, learn_merges, prepare_corpus

PRETOKENS = "__sqltok_pretoken_counts"
CANDIDATES = "__sqltok_candidate_counts"
UNITS = "__sqltok_phase2_units"
VOCABULARY = "__sqltok_phase1_vocabulary"   # (id, token) of the phase-1 model, registered from Arrow
ELIGIBLE = "__sqltok_eligible_units"       # (unit): the ids a candidate unit may be
MAX_NGRAM = 30
MIN_COUNT = 15


@dataclass
class SuperwordReport:
    """What a superword training run did: corpus, aggregation (type-token ratios) and stage times."""

    model: str
    method: str
    documents: int
    bytes: int
    pretokens: int              # pretoken occurrences
    unique_pretokens: int
    candidates: int             # candidate occurrences
    unique_candidates: int
    pieces: int | None          # piece occurrences after the greedy split (None: not split)
    unique_pieces: int | None
    regular_merges: int
    supermerges: int
    vocab_size: int
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def pretoken_type_token_ratio(self) -> float:
        return self.unique_pretokens / max(1, self.pretokens)

    @property
    def candidate_type_token_ratio(self) -> float:
        return self.unique_candidates / max(1, self.candidates)

    @property
    def piece_type_token_ratio(self) -> float | None:
        return None if self.pieces is None else self.unique_pieces / max(1, self.pieces)


def train_superword(con: duckdb.DuckDBPyConnection, source, vocab_size: int, model: str, *,
                    method: Literal["boundless", "superbpe"] = "boundless",
                    supermerges: int | Literal["match"] | None = None, greedy_split: bool = False,
                    simple: bool = False, special_tokens=DEFAULT_SPECIAL_TOKENS, replace: bool = False,
                    phase1: str | None = None, progress: bool = False) -> SuperwordReport:
    """Train a BoundlessBPE (`method="boundless"`) or SuperBPE (`method="superbpe"`) model named
    `model` on `source` and store it in `con`'s database, identical to the reference implementation.

    BoundlessBPE finds the number of regular merges and supermerges itself. SuperBPE adds
    `supermerges` supermerges to a phase-1 model of `vocab_size - supermerges` tokens; "match" takes the
    number a BoundlessBPE run of `vocab_size` finds (the two models are then the same). `greedy_split`
    splits candidates into frequent pretoken n-grams first (paper Appendix B). `phase1` names a stored
    two-phase model trained on the same corpus whose pretoken and candidate counts are reused; `source`
    is then ignored.
    """
    check_vocab_size(vocab_size)
    if method not in ("boundless", "superbpe"):
        raise SqltokError(f"method must be 'boundless' or 'superbpe', not {method!r}")
    if method == "boundless" and supermerges is not None:
        raise SqltokError("BoundlessBPE finds the number of supermerges itself; do not give supermerges")
    if method == "superbpe":
        _check_supermerges(supermerges, vocab_size)
    register(con)
    ensure_schema(con)
    check_new_name(con, model, replace)
    seconds: dict[str, float] = {}
    target = vocab_size - supermerges if isinstance(supermerges, int) else vocab_size
    try:
        t0 = time.perf_counter()
        if phase1 is None:
            query, info = prepare_corpus(con, as_source(source))
            script_aware = not simple
            count_pretokens(con, query, script_aware, PRETOKENS)
        else:
            info, script_aware = _reuse_counts(con, phase1, target)
        pretokens = arrow_table(con, f"SELECT pretoken, n FROM {PRETOKENS}")
        seconds["pretokenize_and_count"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        p1 = learn_merges(pretokens, target, script_aware, special_tokens, progress, "phase 1")
        seconds["phase1"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        if phase1 is None:
            _count_candidates(con, p1, query)
        else:
            _reuse_candidates(con, phase1, p1)
        info["phase1_vocab_size"] = target
        extracted_with = p1
        seconds["candidates"] = time.perf_counter() - t0

        source, prune, bl = CANDIDATES, _prune_below(p1, target), None
        if supermerges == "match":  # s and r from BoundlessBPE on the same candidates, then SuperBPE
            t0 = time.perf_counter()
            units = _phase2_input(con, source, p1, greedy_split, seconds)
            bl = _phase2(units, p1, vocab_size, "boundless", 0, prune, progress)
            seconds["phase2_boundless"] = time.perf_counter() - t0
            p1 = _prefix(p1, bl["regular"])
            _resplit_candidates(con, p1, CANDIDATES, UNITS)
            source, supermerges = UNITS, len(bl["new_id"])
        elif method == "superbpe":
            prune = None  # s supermerges may go below any phase-1 count
        units = _phase2_input(con, source, p1, greedy_split, seconds)
        stats = _stats(con, greedy_split)
        _register_vocabulary(con, extracted_with)
        # Phase 2 (Cython, GIL released) runs on one core while DuckDB writes the counts on the other.
        with transaction(con), Background(_phase2, units, p1, vocab_size, method, supermerges or 0, prune,
                                          progress) as job:
            t0 = time.perf_counter()
            delete_rows(con, model)
            con.execute(f"INSERT INTO sqltok_store.pretoken_counts SELECT ?, pretoken, n FROM {PRETOKENS}", [model])
            con.execute(sql_text("store_candidates").format(source=CANDIDATES, vocabulary=VOCABULARY), [model])
            seconds["store"] = time.perf_counter() - t0
            out = job.result()
            if bl is not None and _supermerge_bytes(out) != _supermerge_bytes(bl):
                # Pruned SuperBPE equals BoundlessBPE only if the unpruned one does (paper section 3.1);
                # when not, the cuts may have mattered: run it again without them.
                out = _phase2(units, p1, vocab_size, method, supermerges, None, progress)
            seconds["phase2"] = job.seconds
            result = _assemble(p1, out, method, special_tokens)
            save_model(con, model, result, info)
    finally:
        named_tokenizers(con).remove(_PHASE1_NAME)
        for t in (PRETOKENS, CANDIDATES, UNITS, "__sqltok_runs", "__sqltok_stored"):
            con.execute(f"DROP TABLE IF EXISTS {t}")
        for view in (VOCABULARY, ELIGIBLE):
            con.unregister(view)  # a no-op for a name never registered
        _drop_ngram_tables(con)
    return SuperwordReport(model, method, info["documents"], info["bytes"], stats["pretokens"],
                           len(pretokens), stats["candidates"], stats["unique_candidates"],
                           stats.get("pieces"), stats.get("unique_pieces"), len(result.merges), len(result.supermerges),
                           result.vocab_size, seconds)


def _check_supermerges(supermerges, vocab_size: int) -> None:
    if supermerges == "match":
        return
    if not isinstance(supermerges, int) or isinstance(supermerges, bool) or supermerges < 1:
        raise SqltokError(f"SuperBPE needs supermerges: a positive number or 'match', not {supermerges!r}")
    if vocab_size - supermerges < MIN_VOCAB_SIZE:
        raise SqltokError(f"{supermerges} supermerges leave a phase-1 vocabulary of {vocab_size - supermerges} "
                          f"tokens, fewer than the {MIN_VOCAB_SIZE} byte tokens")


# -- stages ----------------------------------------------------------------------------------------

_PHASE1_NAME = "__sqltok_phase1"


def _reuse_counts(con, name: str, target: int) -> tuple[dict, bool]:
    """Copy the pretoken counts of stored model `name` into the work table; its corpus information."""
    require_model(con, name)
    row = con.execute("SELECT source, documents, null_documents, empty_documents, bytes, script_aware, "
                      "phase1_vocab_size FROM sqltok_store.models WHERE model = ?", [name]).fetchall()[0]
    if row[6] is None:
        raise SqltokError(f"model {name!r} holds no supermerge candidates (train it with a superword method)")
    if row[6] < target:
        raise SqltokError(f"model {name!r} has candidates for a phase-1 vocabulary of {row[6]} tokens; this "
                          f"run needs {target}: train on the corpus instead")
    con.execute(f"CREATE OR REPLACE TEMP TABLE {PRETOKENS} AS "
                "SELECT pretoken, n FROM sqltok_store.pretoken_counts WHERE model = ?", [name])
    keys = ("source", "documents", "null_documents", "empty_documents", "bytes")
    return dict(zip(keys, row[:5])), row[5]


def _reuse_candidates(con, name: str, p1: Model) -> None:
    """The stored candidates of model `name` as ids of `p1` (a phase-1 model no larger than the one
    they were extracted with), cut where a unit is not eligible under `p1`."""
    _register_vocabulary(con, p1)
    con.execute(sql_text("candidates_to_ids").format(target="__sqltok_stored", vocabulary=VOCABULARY), [name])
    _resplit_candidates(con, p1, "__sqltok_stored", CANDIDATES)
    con.execute("DROP TABLE __sqltok_stored")


def _register_vocabulary(con, p1: Model) -> None:
    """Register `p1`'s tokens as the Arrow view VOCABULARY(id, token), NULL where not UTF-8 text."""
    texts = []
    for t in p1.tokens:
        try:
            texts.append(t.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(None)
    con.register(VOCABULARY, pa.table({"id": pa.array(range(len(texts)), pa.int32()),
                                       "token": pa.array(texts, pa.string())}))


def _phase1_tokenizer(con, p1: Model) -> str:
    """Register the phase-1 model on `con` for the SQL functions; its name."""
    named_tokenizers(con).put(_PHASE1_NAME, BPETokenizer.from_model(p1, _PHASE1_NAME))
    return _PHASE1_NAME


def _count_candidates(con, p1: Model, query: str) -> None:
    name = _phase1_tokenizer(con, p1)
    con.execute(f"DROP TABLE IF EXISTS {CANDIDATES}")
    con.execute(sql_text("candidate_counts").format(target=CANDIDATES, tokenizer=f"'{name}'", source=query))


def _prefix(p1: Model, merges: int) -> Model:
    """The phase-1 model cut to its first `merges` merges (BPE stopped earlier gives exactly that)."""
    size = MIN_VOCAB_SIZE + len({p1.tokens[m.left] + p1.tokens[m.right] for m in p1.merges[:merges]})
    return Model(method="word", tokens=p1.tokens[:size], token_counts=p1.token_counts[:size],
                 is_super=p1.is_super[:size], merges=p1.merges[:merges], settings=p1.settings,
                 special_tokens={s: size + i for i, s in enumerate(p1.special_tokens)})


def _eligible_ids(p1: Model) -> pa.Array:
    """The token ids of `p1` a candidate unit may be: text holding a letter that `p1` encodes to
    exactly that one token."""
    tok = BPETokenizer.from_model(p1, _PHASE1_NAME)
    texts = pa.array([t.decode("utf-8", "replace") for t in p1.tokens], pa.large_string())
    letters = letter_mask(tok)
    encoded = tok.encode_arrow(texts).to_pylist()
    return pa.array([t for t, ids in enumerate(encoded) if letters[t] and ids == [t]], pa.int32())


def _resplit_candidates(con, p1: Model, source: str, target: str) -> None:
    """Cut the candidates of `source` where a unit is not eligible under phase-1 model `p1` (a smaller
    model than the one they were extracted with, whose eligible units are a subset), into `target`."""
    con.register(ELIGIBLE, pa.table({"unit": _eligible_ids(p1)}))
    con.execute(sql_text("resplit_candidates").format(source=source, target=target, eligible=ELIGIBLE))


def _prune_below(p1: Model, target: int) -> int | None:
    """The count every BoundlessBPE supermerge exceeds (and so every supermerge of the matching
    SuperBPE): the smallest phase-1 merge count, when phase 1 reached its full size (otherwise the
    regular merges can run out, and then any count wins: None)."""
    if len(p1.tokens) < target or not p1.merges:
        return None
    return min(m.count for m in p1.merges)


def _phase2_input(con, source: str, p1: Model, greedy_split: bool, seconds: dict) -> pa.Table:
    """The weighted sequences phase 2 merges over: the candidates of `source`, or their greedy-split
    pieces."""
    if not greedy_split:
        return arrow_table(con, f"SELECT candidate, n FROM {source}")
    t0 = time.perf_counter()
    _greedy_split(con, source, max(p1.merges[-1].count if p1.merges else 0, MIN_COUNT))
    seconds["greedy_split"] = seconds.get("greedy_split", 0.0) + time.perf_counter() - t0
    return arrow_table(con, "SELECT candidate, n FROM __sqltok_split")


def _greedy_split(con, source: str, c_min: int) -> None:
    """Apriori n-gram counting (one query per length, pruned by joins on the previous length) and the
    greedy left-to-right split into table `__sqltok_split`."""
    con.execute(sql_text("ngram_start").format(candidates=source, c_min=c_min))
    size = 1
    while size < MAX_NGRAM:
        con.execute(sql_text("ngram_step").format(size=size + 1, prev=size, c_min=c_min))
        if con.execute(f"SELECT count(*) FROM __sqltok_grams_{size + 1}").fetchall()[0][0] == 0:
            break
        size += 1
    grams = " UNION ALL ".join(f"SELECT cid, i, {k} AS size FROM __sqltok_grams_{k}" for k in range(2, size + 1))
    if size == 1:
        grams = "SELECT NULL::BIGINT AS cid, NULL::BIGINT AS i, NULL::INTEGER AS size WHERE false"
    con.execute(sql_text("greedy_split").format(target="__sqltok_split", grams=grams, size=size))


def _drop_ngram_tables(con) -> None:
    for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary AND "
                            "(table_name LIKE '__sqltok_grams_%' OR table_name = '__sqltok_split')").fetchall():
        con.execute(f'DROP TABLE IF EXISTS "{t}"')


def _phase2(units: pa.Table, p1: Model, vocab_size: int, method: str, supermerges: int,
            prune_below: int | None, progress: bool, cancel: threading.Event | None = None) -> dict:
    """Phase 2 in Cython (pruned below `prune_below`, see `_prune_below`); `cancel`, when set by another
    thread, stops it with SqltokError."""
    ids = {t: i for i, t in enumerate(p1.tokens)}
    total = supermerges if method == "superbpe" else vocab_size - MIN_VOCAB_SIZE
    bar = Progress(f"phase 2 ({method})", total, "steps" if method == "boundless" else "supermerges") \
        if progress else None

    def report(done: int, size: int) -> None:
        if cancel is not None and cancel.is_set():
            raise SqltokError("phase 2 cancelled")
        if bar is not None:
            bar.update(done if method == "superbpe" else size - MIN_VOCAB_SIZE)

    out = train_phase2(
        units.column(0).combine_chunks(), units.column(1).combine_chunks(), p1.tokens,
        [ids[p1.tokens[m.left] + p1.tokens[m.right]] for m in p1.merges], [m.count for m in p1.merges],
        vocab_size, method, supermerges, -1 if prune_below is None else prune_below,
        progress=report if bar is not None or cancel is not None else None)
    if bar is not None:
        bar.close()
    return out


class Background:
    """Run `_phase2` on a thread of its own (`with Background(...) as job: ...; job.result()`); leaving the
    block early cancels it."""

    def __init__(self, fn, *args) -> None:
        self.cancel = threading.Event()
        self.seconds = 0.0
        self._out: dict | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)

    def _run(self, fn, args) -> None:
        t0 = time.perf_counter()
        try:
            self._out = fn(*args, cancel=self.cancel)
        except BaseException as e:  # handed to the caller by result()
            self._error = e
        self.seconds = time.perf_counter() - t0

    def __enter__(self) -> "Background":
        self._thread.start()
        return self

    def result(self) -> dict:
        while self._thread.is_alive():
            self._thread.join(0.1)  # short waits, so that Ctrl-C reaches the main thread
        if self._error is not None:
            raise self._error
        return self._out

    def __exit__(self, *exc) -> None:
        if self._thread.is_alive():
            self.cancel.set()


def _supermerge_bytes(out: dict) -> list[tuple[bytes, bytes]]:
    """The supermerges of a phase-2 result as pairs of token bytes (ids differ between methods)."""
    tokens = out["tokens"].to_pylist()
    return [(tokens[a], tokens[b]) for a, b in zip(out["left"].to_pylist(), out["right"].to_pylist())]


def _assemble(p1: Model, out: dict, method: str, special_tokens) -> Model:
    """The two-phase model: phase-1 merges kept (in final ids), supermerges, settings as the reference."""
    tokens = out["tokens"].to_pylist()
    final = {t: i for i, t in enumerate(tokens)}
    regular = [Merge(final[p1.tokens[m.left]], final[p1.tokens[m.right]], m.count, m.flag)
               for m in p1.merges[:out["regular"]]]
    supers = [Merge(*m) for m in zip(out["left"].to_pylist(), out["right"].to_pylist(),
                                     out["count"].to_pylist(), out["flag"].to_pylist())]
    return Model(
        method=method, tokens=tokens, token_counts=out["token_counts"].to_pylist(),
        is_super=[bool(x) for x in out["is_super"].to_pylist()], merges=regular, settings=p1.settings,
        special_tokens={s: len(tokens) + i for i, s in enumerate(special_tokens)}, supermerges=supers,
        super_settings=dict(p1.settings, is_super=True, superbpe_mode=method == "superbpe"),
    )


def _stats(con, greedy_split: bool) -> dict:
    """Occurrence and unique counts of pretokens and candidates (the type-token ratios)."""
    pretokens = con.execute(f"SELECT sum(n) FROM {PRETOKENS}").fetchall()[0][0] or 0
    candidates, unique = con.execute(f"SELECT sum(n), count(*) FROM {CANDIDATES}").fetchall()[0]
    stats = {"pretokens": int(pretokens), "candidates": int(candidates or 0), "unique_candidates": unique}
    if greedy_split:
        pieces, unique = con.execute("SELECT sum(n), count(*) FROM __sqltok_split").fetchall()[0]
        stats.update(pieces=int(pieces or 0), unique_pieces=unique)
    return stats
