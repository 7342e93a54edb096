"""The shape counting UDFs return a batch's distinct units in: every (unit, n) pair on the batch's
first row, the other rows empty (only the sum over rows means anything)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa


def first_row_counts(units: pa.Array, counts: np.ndarray, rows: int) -> pa.Array:
    """list<struct<unit, n: int64>> of `rows` rows, `units` with their `counts` all on the first (32-bit
    list offsets, as DuckDB's UDFs take them)."""
    pairs = pa.StructArray.from_arrays([units, pa.array(counts)], names=["unit", "n"])
    offsets = np.full(rows + 1, len(units), np.int32)  # (numpy refuses a length of 2^31 or more)
    offsets[0] = 0
    return pa.ListArray.from_arrays(pa.array(offsets), pairs)
