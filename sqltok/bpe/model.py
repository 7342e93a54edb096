"""A trained byte-level BPE model as plain Python data: what the DuckDB tables and the model files hold.

Tokens are identified by their bytes; ids are positions in `tokens`. Merges refer to token ids.
A two-phase model (BoundlessBPE, SuperBPE) also carries `supermerges` and a second settings block.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

#: The 243 byte values that can occur in UTF-8, in the order of the initial vocabulary (ids 0..242).
BYTE_ALPHABET: tuple[int, ...] = tuple(list(range(0x00, 0xC0)) + list(range(0xC2, 0xF5)))

#: Method names as the reference's `.model` header spells them.
METHODS = ("word", "boundless", "superbpe")


class Merge(NamedTuple):
    """One merge: `left` and `right` token ids, the pair count when it was chosen, the flag (1 when
    the merge turned at least one multi-token unit into a single token) and, when its source knows
    it, `new_id`: the token it yields (the token of left's and right's bytes; see `Model.new_ids`).
    Merges compare without `new_id`, which the tokens determine. A named tuple: a model holds a
    hundred thousand of them, made in a quarter of a frozen dataclass's time."""

    left: int
    right: int
    count: int
    flag: int
    new_id: int | None = None

    def __eq__(self, other: object) -> bool:
        return self[:4] == other[:4] if isinstance(other, Merge) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return self[:4] != other[:4] if isinstance(other, Merge) else NotImplemented

    def __hash__(self) -> int:
        return hash(self[:4])


@dataclass
class Model:
    """A byte-level BPE model (method `word`) or a two-phase superword model."""

    method: str
    tokens: list[bytes]
    token_counts: list[int]
    is_super: list[bool]
    merges: list[Merge]
    settings: dict
    special_tokens: dict[str, int] = field(default_factory=dict)
    supermerges: list[Merge] = field(default_factory=list)
    super_settings: dict | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")
        if not (len(self.tokens) == len(self.token_counts) == len(self.is_super)):
            raise ValueError("tokens, token_counts and is_super must have the same length")

    @property
    def vocab_size(self) -> int:
        """Number of tokens, special tokens not included."""
        return len(self.tokens)

    def new_ids(self, merges: Sequence[Merge]) -> list[int]:
        """The token id each of `merges` yields: its `new_id`, or else the id of its bytes."""
        if all(m.new_id is not None for m in merges):
            return [m.new_id for m in merges]
        ids = {t: i for i, t in enumerate(self.tokens)}
        return [ids[self.tokens[m.left] + self.tokens[m.right]] if m.new_id is None else m.new_id for m in merges]

    @property
    def script_aware(self) -> bool:
        """True when training split documents into runs of one script first."""
        return self.settings.get("script_specific_regex") is not None
