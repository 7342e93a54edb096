"""Id lists given as Arrow list views (list_view, large_list_view) read as lists: pyarrow's cast of a
list view to a list (26.0) keeps a wrong last offset, an invalid array whose last row reads as
something else, so a list view is rebuilt from its values and lengths instead."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def as_large_list(ids: pa.Array, value_type: pa.DataType) -> pa.Array:
    """`ids.cast(pa.large_list(value_type))`, right for list views too (NULL rows stay NULL)."""
    if not (pa.types.is_list_view(ids.type) or pa.types.is_large_list_view(ids.type)):
        return ids.cast(pa.large_list(value_type))
    lengths = pc.list_value_length(ids).fill_null(0).cast(pa.int64())
    offsets = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(lengths)])
    return pa.LargeListArray.from_arrays(offsets, pc.list_flatten(ids).cast(value_type),
                                         mask=ids.is_null() if ids.null_count else None)
