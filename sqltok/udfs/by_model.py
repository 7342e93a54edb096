"""Applying a tokenizer (or a normalization form) per row of a batch whose rows may name different ones."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def by_model(names: pa.Array, values: pa.Array, fn, out_type: pa.DataType) -> pa.Array:
    """fn(name, values of the rows with that name) for each distinct name of the batch (usually one),
    put back in row order; rows whose name is NULL give NULL. Works for every output type: the parts
    are concatenated and taken back in row order, so no type needs a mask kernel."""
    if isinstance(names, pa.ChunkedArray):
        names = names.combine_chunks()
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    distinct = pc.unique(names.drop_null()).to_pylist()
    if len(distinct) == 1 and names.null_count == 0:
        return fn(distinct[0], values)
    order = np.full(len(values), -1, np.int64)
    parts, start = [], 0
    for name in distinct:
        rows = pc.indices_nonzero(pc.equal(names, name).fill_null(False)).to_numpy()
        parts.append(fn(name, values.take(rows)).cast(out_type))
        order[rows] = np.arange(start, start + len(rows))
        start += len(rows)
    order[order < 0] = start  # NULL names: the one NULL appended after the parts
    return pa.concat_arrays(parts + [pa.nulls(1, out_type)]).take(pa.array(order))
