"""Running one task per item on the cluster: submitted at once, gathered as they finish (with a bar
over them when asked for); the first failure cancels the rest and is raised as the task raised it.
A worker that dies mid-task costs a retry on another: the scheduler's own `allowed-failures`."""
from __future__ import annotations

from typing import Callable, Sequence

from distributed import Client, as_completed

from sqltok.progress import ShardProgress

def run_tasks(client: Client, fn: Callable, items: Sequence, args: tuple, sizes: Sequence[int], label: str,
              progress: bool) -> list:
    """`fn(item, *args)` for every item on the cluster, results in the items' order; `sizes` (bytes
    per item) drive the bar."""
    bar = ShardProgress(label, len(items), sum(sizes)) if progress else None
    futures = [client.submit(fn, item, *args, pure=False) for item in items]
    index = {f.key: i for i, f in enumerate(futures)}
    results: list = [None] * len(items)
    try:
        for future in as_completed(futures):
            results[index[future.key]] = future.result()  # raises the task's error
            if bar is not None:
                bar.advance(sizes[index[future.key]])
    finally:
        client.cancel([f for f in futures if not f.done()])
        if bar is not None:
            bar.close()
    return results
