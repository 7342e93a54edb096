"""The cluster's modules, imported only when a run asks for a cluster. `distributed` costs about 0.4 s of
import (every CLI command paid it) and some 45,000 objects that Python's garbage collector then walks in
every full collection, so a process that only encodes would pay for it on every text (a full collection
took 45-120 ms)."""
from importlib import import_module
from types import ModuleType


def cluster_counting() -> ModuleType:
    """`sqltok.cluster.counting` (count_corpus_on, count_candidates_on), imported on first use."""
    return import_module("sqltok.cluster.counting")


def cluster_session() -> ModuleType:
    """`sqltok.cluster.session` (Cluster, local_cluster, connected), imported on first use."""
    return import_module("sqltok.cluster.session")


def cluster_encoding() -> ModuleType:
    """`sqltok.cluster.encoding` (encode_shards), imported on first use."""
    return import_module("sqltok.cluster.encoding")
