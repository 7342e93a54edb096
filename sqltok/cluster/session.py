"""Which cluster a run uses and where its tasks write: a `dask.distributed` client, a folder every
worker can read and write, and how the work is cut (bytes per shard, hash partitions of the counts)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import dask
from distributed import Client, LocalCluster

from sqltok.cluster.core_share import local_share
from sqltok.cluster.outputs import WORK_DIR
from sqltok.cluster.shards import SHARD_BYTES
from sqltok.errors import SqltokError

#: The name of the LocalCluster `--workers N` starts (scripts find its workers by it).
CLUSTER_NAME = "sqltok"
#: Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536 (their memory shows as freed at
#: once); glibc then hands back and maps again the large blocks each batch of a task allocates and
#: frees: a map task took 0.66 s instead of 0.55. sqltok's workers keep glibc's own threshold.
WORKER_ENVIRON = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
#: What the processes of a LocalCluster do besides tasks, slowed: on this machine, which they share
#: with the work, a 2-worker cluster idled at 1.0 CPU-s per 10 s (its workers' profilers sampling
#: every 10 ms, event-loop ticks every 20 ms, system and memory monitors) and at 0.18 with these.
#: The dashboard still shows tasks, progress and memory; its profile page stays empty. A cluster of
#: one's own (`--cluster`) keeps its configuration.
LOCAL_QUIET = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "500ms",
               "distributed.admin.system-monitor.interval": "5s",
               "distributed.worker.memory.monitor-interval": "1s"}
#: Hash partitions of the counts: one reduce task each. Part of the outputs' keys, so it does not
#: follow the number of workers (a rerun with other workers reuses what was counted).
PARTITIONS = 16


@dataclass(frozen=True)
class Cluster:
    """A run on `client`'s cluster writing under `work_dir` (shared by every worker); shards of
    about `shard_bytes`; counts cut into `partitions` by a hash of the unit."""

    client: Client
    work_dir: str = WORK_DIR
    shard_bytes: int = SHARD_BYTES
    partitions: int = PARTITIONS

    def __post_init__(self) -> None:
        if self.shard_bytes < 1 or self.partitions < 1:
            raise SqltokError("shard_bytes and partitions must be positive numbers")
        object.__setattr__(self, "work_dir", os.path.abspath(self.work_dir))


def as_cluster(cluster: Cluster | Client) -> Cluster:
    """A `Cluster`, or a client as one writing under ./sqltok-cluster."""
    if isinstance(cluster, Cluster):
        return cluster
    if isinstance(cluster, Client):
        return Cluster(cluster)
    raise TypeError("cluster must be a dask.distributed Client or a sqltok.cluster.Cluster")


@contextmanager
def local_cluster(workers: int, threads: int | None = None) -> Iterator[Client]:
    """A client of a new LocalCluster named `CLUSTER_NAME` of `workers` processes, closed on leaving;
    each runs one task at a time on `threads` threads (DuckDB's and the Cython kernels'), by default
    its share of this machine's cores."""
    if workers < 1 or (threads is not None and threads < 1):
        raise SqltokError("--workers and threads per worker need positive numbers")
    env = {"SQLTOK_THREADS": str(threads or local_share(workers))}
    with dask.config.set({**WORKER_ENVIRON, **LOCAL_QUIET}), \
            LocalCluster(name=CLUSTER_NAME, n_workers=workers, threads_per_worker=1, processes=True,
                         dashboard_address=":0", env=env) as cluster, Client(cluster) as client:
        yield client


@contextmanager
def connected(address: str) -> Iterator[Client]:
    """A client of the running cluster whose scheduler is at `address` (tcp://host:8786)."""
    try:
        client = Client(address)
    except ValueError as e:  # an address Dask cannot parse (no port, an unknown protocol)
        raise SqltokError(f"--cluster {address!r} is not a scheduler address like tcp://host:8786: {e}") from None
    with client:
        yield client
