"""The phase-1 model of a two-phase (superword) run as the merge loop's Arrow arrays: what candidates,
phase 2 and the store read of it, without a Python object per token and merge. Its `Model` is built
only for the stages that need one (reused counts, the cluster, cutting candidates again)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.bpe.model import Model
from sqltok.bpe.settings import MIN_VOCAB_SIZE, reference_settings
from sqltok.bpe.train import MERGE_COLUMNS, merges_model


@dataclass(frozen=True)
class Phase1:
    """`tokens` (bytes by id) with their `token_counts`, the `merges` in order (a table of
    `MERGE_COLUMNS`), the pretokenizer (`script_aware`) and the special tokens that follow the
    tokens."""

    tokens: pa.Array
    token_counts: pa.Array
    merges: pa.Table
    script_aware: bool
    special_tokens: tuple[str, ...]

    @classmethod
    def of_loop(cls, out: dict[str, pa.Array], script_aware: bool, special_tokens) -> Phase1:
        """The phase-1 model of the merge loop's arrays `out` (see `train.merge_pretokens`)."""
        return cls(out["tokens"], out["token_counts"], pa.table({k: out[k] for k in MERGE_COLUMNS}), script_aware,
                   tuple(special_tokens))

    @cached_property
    def model(self) -> Model:
        """The same model as a `Model`."""
        arrays = {k: self.merges.column(k).combine_chunks() for k in MERGE_COLUMNS}
        return merges_model(dict(arrays, tokens=self.tokens, token_counts=self.token_counts), self.script_aware,
                            self.special_tokens)

    @property
    def settings(self) -> dict:
        return reference_settings(script_aware=self.script_aware)

    def column(self, name: str) -> np.ndarray:
        """One of the merges' `MERGE_COLUMNS`, in merge order."""
        return self.merges.column(name).to_numpy()

    def prefix(self, merges: int) -> Phase1:
        """The model cut to its first `merges` merges (BPE stopped earlier gives exactly that)."""
        size = MIN_VOCAB_SIZE + len(np.unique(self.column("new_id")[:merges]))
        return Phase1(self.tokens[:size], self.token_counts[:size], self.merges.slice(0, merges), self.script_aware,
                      self.special_tokens)

    def last_count(self) -> int:
        """The count of the last merge (0 without merges)."""
        return int(self.merges.column("count")[-1].as_py()) if self.merges.num_rows else 0

    def prune_below(self, target: int) -> int | None:
        """The count every BoundlessBPE supermerge exceeds (and so every supermerge of the matching
        SuperBPE): the smallest merge count, when the model reached its full size `target`
        (otherwise the regular merges can run out, and then any count wins: None)."""
        if len(self.tokens) < target or not self.merges.num_rows:
            return None
        return pc.min(self.merges.column("count")).as_py()
