"""Task outputs that are never read half-written: each is made under a temporary name beside its
final one and renamed when complete (a rename is atomic on one file system), and named by a key of
everything it depends on, so that finding it means it can be reused."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from contextlib import contextmanager
from typing import Iterator

import duckdb

import sqltok

#: The folder the tasks write to when the caller names none.
WORK_DIR = "sqltok-cluster"
RESULT = "result.json"


def output_key(*parts) -> str:
    """A digest of `parts` (JSON-able) and the versions of sqltok and DuckDB that wrote the output."""
    text = json.dumps([sqltok.__version__, duckdb.__version__, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@contextmanager
def publishing(final: str) -> Iterator[str]:
    """`with publishing(path) as tmp:` fill the file or folder `tmp`; on success it becomes `path`
    (a finished copy another attempt made first is kept), on failure it is removed. `tmp` ends in
    `.partial`, so that what a killed task leaves is never read by a glob of the outputs' suffix
    (DuckDB's globs match hidden files); write it with an explicit format."""
    tmp = os.path.join(os.path.dirname(final), f".{os.path.basename(final)}.{uuid.uuid4().hex}.partial")
    os.makedirs(os.path.dirname(final), exist_ok=True)
    try:
        yield tmp
        if os.path.isdir(tmp) and os.path.isdir(final):  # a retried task's twin finished first
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, final)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        elif os.path.exists(tmp):
            os.unlink(tmp)


def write_result(folder: str, result: dict) -> None:
    """The JSON record of what a task made, inside the folder that is renamed when complete."""
    with open(os.path.join(folder, RESULT), "w", encoding="utf-8") as f:
        json.dump(result, f)


def read_result(folder: str) -> dict | None:
    """The record of a finished output folder, or None when there is none yet."""
    try:
        with open(os.path.join(folder, RESULT), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
