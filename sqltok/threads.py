"""How many threads a call of the Cython kernels uses when the caller does not say."""
from __future__ import annotations

import os


def available_cpus() -> int:
    """The CPUs this process may run on."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cpus or 1)


def default_threads() -> int:
    """$SQLTOK_THREADS, else the CPUs this process may run on, up to 2 (the SQL functions use it too,
    whatever DuckDB's own `threads` setting)."""
    env = os.environ.get("SQLTOK_THREADS")
    if env:
        return max(1, int(env))
    return min(2, available_cpus())
