"""How many threads one task on a worker uses (DuckDB's and the Cython kernels'): the cores its
process may run on, shared evenly by the tasks the worker runs at once (its Dask threads), so that
a task neither oversubscribes the machine nor leaves a core idle. A LocalCluster's workers share one
machine, so `local_cluster` gives each its share of the cores in $SQLTOK_THREADS."""
from __future__ import annotations

import os

from distributed import get_worker

from sqltok.threads import available_cpus


def local_share(workers: int) -> int:
    """The threads of each of `workers` worker processes on this machine."""
    return max(1, available_cpus() // workers)


def task_threads() -> int:
    """$SQLTOK_THREADS, else the worker's cores divided by its Dask threads (called in a task)."""
    env = os.environ.get("SQLTOK_THREADS")
    if env:
        return max(1, int(env))
    return max(1, available_cpus() // get_worker().state.nthreads)
