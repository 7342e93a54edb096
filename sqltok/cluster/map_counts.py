"""The map task of counting on a cluster, run on a worker: one shard's units counted by sqltok's own
`count_units` in a DuckDB of the task's own, written as Parquet partitioned by a hash of the unit,
with the shard's corpus statistics, in a folder keyed by the shard and the settings."""
from __future__ import annotations

import glob
import os
from dataclasses import asdict, dataclass

import duckdb

from sqltok.arrow_memory import arrow_on_malloc
from sqltok.bpe.candidate_counts import PHASE1_TOKENIZER, candidate_units
from sqltok.bpe.model import Model
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.cluster.outputs import output_key, publishing, read_result, write_result
from sqltok.cluster.shard_source import shard_source
from sqltok.cluster.shards import Shard
from sqltok.cluster.worker_state import worker_connection, worker_tokenizer
from sqltok.corpus.sources import Source, quote_literal
from sqltok.errors import ShardError
from sqltok.sql_files import sql_text
from sqltok.training.corpus import read_corpus
from sqltok.training.counting import Units, count_units, pretoken_units
from sqltok.training.work_tables import WorkTables


@dataclass(frozen=True)
class UnitsJob:
    """What the map tasks count: pretokens (script-aware or not), or the supermerge candidates of
    phase-1 model `phase1` (its `phase1_key` a digest of it), as keys (`Counts.keys`); `sql_type` the
    unit's column type."""

    kind: str
    script_aware: bool
    phase1: Model | None = None
    phase1_key: str | None = None

    @property
    def column(self) -> str:
        return "pretoken" if self.kind == "pretokens" else "candidate"

    @property
    def sql_type(self) -> str:
        return "VARCHAR" if self.kind == "pretokens" else "BLOB"

    def settings(self) -> dict:
        """What the counts depend on besides the shard (and what they are written as)."""
        return {"kind": self.kind, "script_aware": self.script_aware, "phase1": self.phase1_key,
                "type": self.sql_type}


@dataclass(frozen=True)
class ShardCounts:
    """A map task's output: the shard's statistics and its partition files by partition."""

    stats: dict
    files: dict[int, str]
    bytes_written: int


def map_folder(work_dir: str, shard: Shard, template: Source, job: UnitsJob, partitions: int) -> str:
    """The folder a shard's counts are (or will be) in: keyed by the shard, the reading and the units."""
    key = output_key(shard.identity(), template.text_key, template.text_mode, job.settings(), partitions)
    return os.path.join(work_dir, "map", key)


def finished(folder: str) -> ShardCounts | None:
    """The counts a finished map task left in `folder`, or None."""
    result = read_result(folder)
    if result is None:
        return None
    files = {int(k): os.path.join(folder, v) for k, v in result["files"].items()}
    return ShardCounts(result["stats"], files, result["bytes_written"])


def count_shard(shard: Shard, template: Source, job: UnitsJob, work_dir: str, partitions: int) -> ShardCounts:
    """Count `shard`'s units into its map folder (reusing a finished one); a shard that cannot be
    read fails with its name."""
    folder = map_folder(work_dir, shard, template, job, partitions)
    done = finished(folder)
    if done is not None:
        return done
    try:
        con = worker_connection()
        units = _units(con, job)
        with shard_source(shard, template, con) as src, arrow_on_malloc(), \
                WorkTables(con) as work, publishing(folder) as tmp:
            corpus = read_corpus(con, src)
            counts = count_units(con, corpus.query, units, work.table("shard_counts"))
            os.makedirs(tmp)
            con.execute(sql_text("cluster_map").format(column=units.column, counts=counts.table,
                                                       partitions=int(partitions),
                                                       folder=quote_literal(os.path.join(tmp, "parts"))))
            files = {int(os.path.basename(os.path.dirname(p)).split("=")[1]): os.path.relpath(p, tmp)
                     for p in glob.glob(os.path.join(tmp, "parts", "part=*", "*.parquet"))}
            written = sum(os.path.getsize(os.path.join(tmp, p)) for p in files.values())
            write_result(tmp, {"shard": shard.name, "stats": asdict(corpus.stats), "files": files,
                               "bytes_written": written})
    except (duckdb.Error, OSError, ValueError) as e:  # SqltokErrors and Arrow's are ValueErrors
        raise ShardError(f"shard {shard.name}: {e}") from None
    return finished(folder)


def _units(con: duckdb.DuckDBPyConnection, job: UnitsJob) -> Units:
    if job.kind == "pretokens":
        return pretoken_units(job.script_aware)
    name = f"{PHASE1_TOKENIZER}_{job.phase1_key}"
    worker_tokenizer(con, name, job.phase1_key, lambda: BPETokenizer.from_model(job.phase1, name))
    return candidate_units(name)
