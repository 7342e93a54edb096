"""The reduce task of counting on a cluster: one hash partition's counts from every shard, summed
into one Parquet file keyed by the map outputs it sums."""
from __future__ import annotations

import os

from sqltok.cluster.outputs import output_key, publishing
from sqltok.cluster.worker_state import worker_connection
from sqltok.corpus.sources import quote_literal
from sqltok.sql_files import sql_text


def reduce_path(work_dir: str, column: str, partition: int, files: list[str]) -> str:
    """Where the sum of partition `partition` of `files` is (or will be)."""
    return os.path.join(work_dir, "reduce", f"{output_key(column, partition, sorted(files))}.parquet")


def sum_partition(column: str, partition: int, files: list[str], work_dir: str) -> str:
    """Sum the counts of `files` (one partition of every shard) by unit; the summed file's path
    (reused when it exists)."""
    output = reduce_path(work_dir, column, partition, files)
    if os.path.exists(output):
        return output
    with publishing(output) as tmp:
        sql = sql_text("cluster_reduce").format(column=column, output=quote_literal(tmp), files=sql_list(files))
        worker_connection().execute(sql)
    return output


def sql_list(paths: list[str]) -> str:
    """A SQL list literal of file paths."""
    return "[" + ", ".join(quote_literal(p) for p in paths) + "]"
