"""The share of each Unicode script in a document (code points of the script / all code points), from
sqltok's own Unicode 17 tables: Common (digits, punctuation, spaces) and Inherited (combining marks)
count as scripts of their own."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._scripts import SCRIPT_NAMES, script_counts_arrow

SHARE = pa.struct([("script", pa.string()), ("share", pa.float64())])
SHARES = pa.list_(SHARE)
_NAMES = pa.array(SCRIPT_NAMES, pa.string())


def script_shares_array(texts: pa.Array, threads: int = 1) -> pa.Array:
    """Per document a list of {script, share}, largest share first (ties by script code); empty for
    an empty text, NULL for NULL."""
    counts = script_counts_arrow(texts, threads)
    rows, codes = np.nonzero(counts)
    n = counts[rows, codes].astype(np.float64)
    share = n / counts.sum(axis=1)[rows]
    order = np.lexsort((codes, -share, rows))
    rows, codes, share = rows[order], codes[order], share[order]
    offsets = np.zeros(len(counts) + 1, np.int32)
    np.cumsum(np.bincount(rows, minlength=len(counts)), out=offsets[1:])
    values = pa.StructArray.from_arrays([_NAMES.take(pa.array(codes)), pa.array(share)], fields=list(SHARE))
    mask = pc.is_null(texts) if texts.null_count else None
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=SHARES, mask=mask)
