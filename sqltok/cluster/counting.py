"""Counting on a cluster, the coordinator's side: the source's shards are map tasks (each counts its
units with `count_units` and writes them by hash partition), one reduce task per partition sums
them, and the sums become the run's work table, as `training.counting` would have filled it in one
process. Finished map and reduce outputs are reused, so a restarted run counts only what is left."""
from __future__ import annotations

import hashlib
import os
import pickle
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import replace

import duckdb

from sqltok.bpe.model import Model
from sqltok.cluster.map_counts import ShardCounts, UnitsJob, count_shard, finished, map_folder
from sqltok.cluster.reduce_counts import reduce_path, sql_list, sum_partition
from sqltok.cluster.session import Cluster, as_cluster
from sqltok.cluster.shards import shards_of
from sqltok.cluster.tasks import run_tasks
from sqltok.corpus.sources import Source
from sqltok.sql_files import sql_text
from sqltok.training.corpus import CorpusStats, as_source, require_documents
from sqltok.training.counting import CorpusCounts, Counts, counted
from sqltok.training.stopwatch import Stopwatch
from sqltok.training.work_tables import WorkTables

def count_corpus_on(cluster, con: duckdb.DuckDBPyConnection, source: Source | str, script_aware: bool,
                    work: WorkTables, watch: Stopwatch | None = None, progress: bool = False) -> CorpusCounts:
    """The pretoken counts and statistics of a file source, counted on `cluster` (a `Cluster` or a
    dask client) into the run's work table `pretoken_counts`."""
    src = as_source(source)
    stats, counts = _count(as_cluster(cluster), con, src, UnitsJob("pretokens", script_aware),
                           work.table("pretoken_counts"), watch, progress)
    total = CorpusStats(src.describe(), *(sum(s[k] for s in stats) for k in
                                          ("documents", "null_documents", "empty_documents", "bytes")))
    require_documents(total, src)
    return CorpusCounts(total, script_aware, counts, None)


def count_candidates_on(cluster, con: duckdb.DuckDBPyConnection, source: Source | str, p1: Model,
                        work: WorkTables, watch: Stopwatch | None = None, progress: bool = False) -> Counts:
    """The supermerge candidates of a file source under phase-1 model `p1`, counted on `cluster`
    into the run's work table `candidate_counts`, as keys (`Counts.keys`)."""
    key = hashlib.sha256(pickle.dumps((p1.tokens, p1.merges, p1.settings))).hexdigest()[:32]
    job = UnitsJob("candidates", p1.script_aware, p1, key)
    counts = _count(as_cluster(cluster), con, as_source(source), job, work.table("candidate_counts"), watch,
                    progress)[1]
    return replace(counts, keys=True)


def _count(cluster: Cluster, con, src: Source, job: UnitsJob, target: str, watch: Stopwatch | None,
           progress: bool) -> tuple[list[dict], Counts]:
    """Map, reduce and load one kind of unit; the shards' statistics and the loaded counts."""
    watch = watch or Stopwatch()
    client, work_dir, parts = cluster.client, cluster.work_dir, cluster.partitions
    shards = shards_of(src, cluster.shard_bytes)
    with watch(f"{job.kind}_map"):
        done: list[ShardCounts | None] = [finished(map_folder(work_dir, s, src, job, parts)) for s in shards]
        todo = [s for s, d in zip(shards, done) if d is None]
        shipped = client.scatter(job, broadcast=True, hash=False) if todo and job.phase1 is not None else job
        counted_now = iter(run_tasks(client, count_shard, todo, (src, shipped, work_dir, parts),
                                     [s.nbytes for s in todo], f"counting {job.kind}", progress))
        maps = [d if d is not None else next(counted_now) for d in done]
    by_partition: dict[int, list[str]] = defaultdict(list)
    for m in maps:
        for part, path in m.files.items():
            by_partition[part].append(path)
    with watch(f"{job.kind}_reduce"):
        items = sorted(by_partition.items())
        reduced = [reduce_path(work_dir, job.column, part, files) for part, files in items]
        todo_sums = [item for item, path in zip(items, reduced) if not os.path.exists(path)]
        run_tasks(client, _sum_partition, todo_sums, (job.column, work_dir), [1] * len(todo_sums),
                  f"summing {job.kind}", False)
    with watch(f"{job.kind}_load"):
        if reduced:
            con.execute(sql_text("cluster_load").format(target=target, column=job.column, files=sql_list(reduced)))
        else:
            con.execute(f"CREATE TEMP TABLE {target} ({job.column} {job.sql_type}, n BIGINT)")
    return [m.stats for m in maps], counted(con, target, job.column)


def _sum_partition(item: tuple[int, list[str]], column: str, work_dir: str) -> str:
    return sum_partition(column, item[0], item[1], work_dir)
