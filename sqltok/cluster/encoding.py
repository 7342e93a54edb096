"""Encoding a dataset on a cluster: one task per shard writes that shard's ids (the narrowest
unsigned list type the vocabulary allows) and token counts to a Parquet file of its own, in document
order, through `encode_files.encode_file`; a record beside it, keyed by the shard and the settings,
lets a rerun skip the shards already written. The run ends with a summary of every shard."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from glob import escape, glob
from pathlib import PurePath
from typing import Iterator

import duckdb

from sqltok.bpe.model import Model
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.cluster.outputs import output_key, publishing
from sqltok.cluster.session import as_cluster
from sqltok.cluster.shard_source import shard_source
from sqltok.cluster.shards import Shard, shards_of
from sqltok.cluster.tasks import run_tasks
from sqltok.cluster.worker_state import worker_connection, worker_tokenizer
from sqltok.corpus.sources import Source
from sqltok.encode_files import encode_file
from sqltok.errors import ShardError, SqltokError
from sqltok.tokenizer import Tokenizer
from sqltok.store import ModelFile, load_model, load_model_file

SUMMARY = "_summary.json"
_RECORDS = ".sqltok-shards"


@dataclass(frozen=True)
class TokenizerRecipe:
    """How a worker gets the tokenizer: a file every worker can read, a stored model's tables, or
    the file a stored model is kept as (WordPiece, Unigram, a tiktoken encoding)."""

    name: str
    path: str | None = None
    model: Model | None = None
    key: str = ""
    kept: ModelFile | None = None

    def build(self) -> Tokenizer:
        if self.path is not None:
            return Tokenizer.load(self.path, name=self.name)
        if self.kept is not None:
            return Tokenizer.from_stored(self.kept.kind, self.kept.content, self.name)
        return BPETokenizer.from_model(self.model, self.name)


def recipe(con: duckdb.DuckDBPyConnection, model: str) -> TokenizerRecipe:
    """A tokenizer file (a path that exists) or a model stored in `con`'s database, for the workers."""
    if os.path.exists(model):
        st = os.stat(model)
        path = os.path.abspath(model)
        return TokenizerRecipe(os.path.splitext(os.path.basename(model))[0], path,
                               key=output_key(path, st.st_size, st.st_mtime_ns))
    kept = load_model_file(con, model)
    if kept is not None:
        return TokenizerRecipe(model, kept=kept, key=output_key(kept.kind, hashlib.sha256(kept.content).hexdigest()))
    stored = load_model(con, model)
    return TokenizerRecipe(model, model=stored, key=output_key(repr((stored.tokens, stored.merges,
                                                                      stored.supermerges, stored.settings,
                                                                      stored.special_tokens))))


@dataclass(frozen=True)
class ShardEncoding:
    shard: str
    output: str
    rows: int
    tokens: int


@dataclass(frozen=True)
class EncodeRun:
    """What `encode_shards` wrote: one Parquet per shard, and the summary file."""

    summary: str
    shards: list[ShardEncoding]
    written: int   # shards encoded by this run (the others were there from an earlier one)

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.shards)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.shards)


def encode_shards(cluster, con: duckdb.DuckDBPyConnection, model: str, source: Source, output_dir: str, *,
                  allow_special: bool = False, progress: bool = False) -> EncodeRun:
    """Encode every document of the file `source` with `model` (stored in `con`'s database, or a
    tokenizer file) on `cluster`, one Parquet file of `ids` and `n_tokens` per shard under
    `output_dir` (not one the source's glob reads), and a summary `_summary.json`; the shard files
    an earlier run wrote there that this run does not write are removed."""
    c = as_cluster(cluster)
    tok = recipe(con, model)
    output_dir = os.path.abspath(output_dir)
    shards = shards_of(source, c.shard_bytes)
    names = output_names(shards)
    inputs = os.path.abspath(source.path)
    if any(PurePath(output_dir, n).match(inputs) for n in [*names, SUMMARY]):
        raise SqltokError(f"the input {source.path} takes in the files written to {output_dir}: a rerun would encode "
                          "them, and a reader of the folder would find texts and ids mixed; choose another folder")
    records = [os.path.join(output_dir, _RECORDS, f"{n}.json") for n in names]
    keys = [output_key(s.identity(), source.text_key, source.text_mode, tok.key, allow_special) for s in shards]
    done = [_record(r, k) for r, k in zip(records, keys)]
    todo = [(s, os.path.join(output_dir, n), r, k) for s, n, r, k, d in zip(shards, names, records, keys, done)
            if d is None]
    shipped = c.client.scatter(tok, broadcast=True, hash=False) if todo and tok.path is None else tok
    fresh = iter(run_tasks(c.client, encode_shard, todo, (source, shipped, allow_special),
                           [t[0].nbytes for t in todo], "encoding", progress))
    results = [d if d is not None else next(fresh) for d in done]
    _remove_stale(output_dir, names)
    summary = os.path.join(output_dir, SUMMARY)
    with publishing(summary) as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump({"model": model, "source": source.describe(), "shards": [asdict(r) for r in results],
                   "rows": sum(r.rows for r in results), "tokens": sum(r.tokens for r in results)}, f, indent=1)
    return EncodeRun(summary, results, len(todo))


@contextmanager
def restored_on_failure(output_dir: str) -> Iterator[None]:
    """On failure, `output_dir` as it was: removed if it did not exist, else without the partial
    files (hidden, ending in 'partial') that tasks stopped mid-write left; the shards finished before
    the failure stay, with their records, for a rerun to reuse. Leave it when no task of the run can
    write any more (its cluster closed)."""
    existed = os.path.exists(output_dir)
    try:
        yield
    except BaseException:
        if not existed:
            shutil.rmtree(output_dir, ignore_errors=True)
        else:
            for folder in (output_dir, os.path.join(output_dir, _RECORDS)):
                for path in glob(os.path.join(escape(folder), ".*partial")):
                    os.unlink(path)
        raise


def _remove_stale(output_dir: str, names: list[str]) -> None:
    """Remove the shard outputs that an earlier run's records or summary say it wrote into
    `output_dir` and that this run (its outputs `names`) does not write: the shards of a file that
    grew, or of another shard size, which a glob of the folder would read besides this run's. No
    other file is touched."""
    records = os.path.join(output_dir, _RECORDS)
    earlier = {n.removesuffix(".json") for n in os.listdir(records) if n.endswith(".json")} \
        if os.path.isdir(records) else set()
    try:
        with open(os.path.join(output_dir, SUMMARY), encoding="utf-8") as f:
            earlier.update(os.path.basename(s["output"]) for s in json.load(f)["shards"])
    except FileNotFoundError:
        pass
    for name in earlier - set(names):
        for path in (os.path.join(output_dir, name), os.path.join(records, f"{name}.json")):  # the record last
            if os.path.isfile(path):
                os.unlink(path)


def output_names(shards: list[Shard]) -> list[str]:
    """Each shard's output file name: its file's path below the inputs' common folder (folders
    joined by '__'), the shard's part, '.parquet'; an error when two shards would get one name."""
    root = os.path.commonpath([os.path.dirname(s.path) for s in shards])
    names = [os.path.relpath(s.path, root).replace(os.sep, "__") + s.label + ".parquet" for s in shards]
    seen: dict[str, str] = {}
    for shard, name in zip(shards, names):
        if seen.setdefault(name, shard.path) != shard.path:
            raise SqltokError(f"{seen[name]} and {shard.path} would both be encoded to {name} (folders are joined "
                              "by '__' in the output names): rename one of them")
    return names


def encode_shard(item: tuple[Shard, str, str, str], source: Source, tok: TokenizerRecipe,
                 allow_special: bool) -> ShardEncoding:
    """Encode one shard into its output file (renamed into place when complete), then its record."""
    shard, output, record, key = item
    try:
        con = worker_connection()
        worker_tokenizer(con, tok.name, tok.key, tok.build)
        with shard_source(shard, source, con) as src:
            os.makedirs(os.path.dirname(output), exist_ok=True)
            if os.path.exists(record):  # an earlier run's: it must not vouch for the file replaced below
                os.unlink(record)
            summary = encode_file(con, tok.name, src, output, allow_special=allow_special, compact=True)
    except (duckdb.Error, OSError, ValueError) as e:  # SqltokErrors and Arrow's are ValueErrors
        raise ShardError(f"shard {shard.name}: {e}") from None
    result = ShardEncoding(shard.name, output, summary.rows, summary.tokens)
    with publishing(record) as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump({"key": key, **asdict(result)}, f)
    return result


def _record(path: str, key: str) -> ShardEncoding | None:
    """The shard's earlier result if its record has this key and its output is there."""
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
    except FileNotFoundError:
        return None
    if rec.pop("key") != key or not os.path.exists(rec["output"]):
        return None
    return ShardEncoding(**rec)
