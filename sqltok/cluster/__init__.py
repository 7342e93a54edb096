"""Counting and encoding on a Dask cluster: shards of a file source are tasks; workers count their
units (or encode them) in DuckDBs of their own; reduce tasks sum the counts by hash partition; the
coordinator loads the sums and trains as in one process, to the same model byte for byte."""
from sqltok.cluster.session import CLUSTER_NAME, Cluster, as_cluster, local_cluster

__all__ = ["CLUSTER_NAME", "Cluster", "as_cluster", "local_cluster"]
