"""Counting and encoding on a Dask cluster: shards of a file source are tasks; workers count their
units (or encode them) in DuckDBs of their own; reduce tasks sum the counts by hash partition; the
coordinator loads the sums and trains as in one process, to the same model byte for byte.

Its names come from `sqltok.cluster.session`, imported on first use (it imports Dask), so that the
package's light modules (flags, shards, outputs) cost nothing to import."""
from sqltok.training.on_cluster import cluster_session

__all__ = ["CLUSTER_NAME", "Cluster", "as_cluster", "local_cluster"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(cluster_session(), name)
    raise AttributeError(f"module 'sqltok.cluster' has no attribute {name!r}")
