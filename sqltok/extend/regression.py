"""What an extension changed: whether every old id still decodes to its bytes, bytes per token on
the new corpus before and after, and how many of its texts now encode differently."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.duck import arrow_batches
from sqltok.tokenizer import Tokenizer

#: Documents encoded at a time by the report (both tokenizers).
BATCH_ROWS = 8192


@dataclass(frozen=True)
class Regression:
    """The regression report of an extension on the documents of its corpus."""

    old_ids: int            # the base's token ids checked
    old_ids_changed: int    # of them, how many decode to other bytes now (0: every old id is as it was)
    documents: int
    bytes: int
    tokens_before: int
    tokens_after: int
    texts_changed: int      # documents whose ids differ between the base and the extended model

    @property
    def bytes_per_token_before(self) -> float:
        return self.bytes / self.tokens_before if self.tokens_before else 0.0

    @property
    def bytes_per_token_after(self) -> float:
        return self.bytes / self.tokens_after if self.tokens_after else 0.0


def changed_rows(a: pa.Array, b: pa.Array) -> int:
    """How many rows of two list<int> arrays of the same length differ."""
    a, b = a.cast(pa.large_list(pa.int32())), b.cast(pa.large_list(pa.int32()))
    la, lb = pc.list_value_length(a).to_numpy(zero_copy_only=False), pc.list_value_length(b).to_numpy(zero_copy_only=False)
    same = la == lb
    rows = np.flatnonzero(same)
    lengths = la[rows]
    if lengths.sum():
        starts_a = a.offsets.to_numpy()[rows]
        starts_b = b.offsets.to_numpy()[rows]
        owner = np.repeat(np.arange(len(rows)), lengths)
        within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        va, vb = a.values.to_numpy(), b.values.to_numpy()
        unequal = va[np.repeat(starts_a, lengths) + within] != vb[np.repeat(starts_b, lengths) + within]
        same[rows[np.unique(owner[unequal])]] = False
    return int(len(same) - same.sum())


def regression(con: duckdb.DuckDBPyConnection, query: str, before: Tokenizer, after: Tokenizer,
               base_tokens: list[bytes | None]) -> Regression:
    """The report for the documents of `query` (a `text` column), encoded by `before` (the base, whose
    token bytes by id are `base_tokens`) and `after` (the extended model)."""
    old = pa.array(base_tokens, pa.large_binary())
    now = after.token_bytes_array().cast(pa.large_binary())[:len(old)]   # shorter when a few new tokens
    now = pa.concat_arrays([now, pa.nulls(len(old) - len(now), pa.large_binary())])  # moved specials down
    ids = pc.sum(pc.is_valid(old)).as_py() or 0
    changed = ids - (pc.sum(pc.equal(old, now).fill_null(False)).as_py() or 0)
    docs = nbytes = tokens_before = tokens_after = texts = 0
    for batch in arrow_batches(con, f"SELECT text FROM ({query}) WHERE text <> ''", BATCH_ROWS):
        text = batch.column(0)
        a, b = before.encode_arrow(text), after.encode_arrow(text)
        docs += len(text)
        nbytes += pc.sum(pc.binary_length(text)).as_py() or 0
        tokens_before += pc.sum(pc.list_value_length(a)).as_py() or 0
        tokens_after += pc.sum(pc.list_value_length(b)).as_py() or 0
        texts += changed_rows(a, b)
    return Regression(ids, changed, docs, nbytes, tokens_before, tokens_after, texts)
