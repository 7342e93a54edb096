"""What a worker process keeps between its tasks: one in-memory DuckDB per worker thread with sqltok
registered (registering costs more than counting a small shard), and the tokenizers its tasks built,
by the key of what they were built from (a phase-1 model, a tokenizer file), the latest one only."""
from __future__ import annotations

import os
import threading
from typing import Callable

import duckdb

from sqltok.cluster.core_share import task_threads
from sqltok.named_tokenizers import named_tokenizers
from sqltok.register import register
from sqltok.tokenizer import Tokenizer

_local = threading.local()
_lock = threading.Lock()
_tokenizers: dict[str, Tokenizer] = {}


def worker_connection() -> duckdb.DuckDBPyConnection:
    """This thread's DuckDB (in memory, sqltok registered, the task's share of the cores as its
    threads and the Cython kernels'); tasks leave no tables."""
    con = getattr(_local, "con", None)
    if con is None:
        threads = task_threads()
        os.environ["SQLTOK_THREADS"] = str(threads)  # the kernels' default_threads() in this process
        con = _local.con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        register(con)
    return con


def worker_tokenizer(con: duckdb.DuckDBPyConnection, name: str, key: str, build: Callable[[], Tokenizer]) -> None:
    """Make the tokenizer `build()` gives known to `con` as `name`, built once per `key`."""
    with _lock:
        tok = _tokenizers.get(key)
        if tok is None:
            _tokenizers.clear()
            tok = _tokenizers[key] = build()
    named_tokenizers(con).put(name, tok)
