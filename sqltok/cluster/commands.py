"""The cluster flags of `sqltok train` and `sqltok encode`, and what they run."""
from __future__ import annotations

import argparse
import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

import duckdb

from sqltok.cluster.outputs import WORK_DIR
from sqltok.cluster.shards import SHARD_BYTES
from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.training.on_cluster import cluster_encoding, cluster_session

if TYPE_CHECKING:
    from sqltok.cluster.session import Cluster


def add_cluster_flags(p: argparse.ArgumentParser) -> None:
    """--workers N, --cluster ADDRESS, --cluster-dir DIR, --shard-mb MB."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--workers", type=int, metavar="N",
                   help="run on a local Dask cluster (named 'sqltok') of N worker processes")
    g.add_argument("--cluster", metavar="ADDRESS", help="run on the Dask cluster whose scheduler is at ADDRESS "
                   "(tcp://host:8786); its workers need sqltok and the files")
    p.add_argument("--cluster-dir", default=WORK_DIR, metavar="DIR",
                   help=f"a folder every worker can read and write, for the tasks' outputs (default: ./{WORK_DIR}); "
                   "a rerun reuses the shards it finds there")
    p.add_argument("--shard-mb", type=float, default=SHARD_BYTES / 2**20, metavar="MB",
                   help=f"input per task: Parquet row groups or JSONL lines of about MB MiB (default {SHARD_BYTES >> 20})")


@contextmanager
def cluster_of(args) -> Iterator["Cluster | None"]:
    """The cluster the flags ask for (None: run in this process, without importing Dask), closed on leaving."""
    if not wants_cluster(args):
        yield None
        return
    if not (math.isfinite(args.shard_mb) and args.shard_mb > 0):  # 0 was shards of one byte: a task per byte
        raise SqltokError(f"--shard-mb takes a positive number of MiB, not {args.shard_mb}")
    session = cluster_session()
    with (session.local_cluster(args.workers) if args.workers is not None else session.connected(args.cluster)) as client:
        yield session.Cluster(client, args.cluster_dir, shard_bytes=max(1, int(args.shard_mb * 2**20)))


def wants_cluster(args) -> bool:
    return args.workers is not None or args.cluster is not None


def encode_on_cluster(con: duckdb.DuckDBPyConnection, args, src: Source, progress: bool) -> None:
    """`sqltok encode --workers/--cluster`: one Parquet per shard under --output (a folder), which a
    failed run leaves as it was (`restored_on_failure`)."""
    if args.count or args.keep_columns:
        raise SqltokError("--workers/--cluster write ids and token counts per shard; --count and --keep-columns "
                          "are for one output file")
    encoding = cluster_encoding()
    with encoding.restored_on_failure(args.output), cluster_of(args) as cluster:  # restored once it is closed
        run = encoding.encode_shards(cluster, con, args.model, src, args.output, allow_special=args.allow_special,
                                     progress=progress)
    print(f"wrote {len(run.shards)} shards ({run.written} now, {len(run.shards) - run.written} from an earlier run) "
          f"under {args.output}: {run.rows} rows, {run.tokens:,} tokens; summary {run.summary}")
