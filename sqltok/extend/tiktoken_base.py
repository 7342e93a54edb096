"""A `.tiktoken` file as the base of an extension, extended into a tiktoken encoding (ranks, pattern,
special tokens) that the database keeps whole (kind `tiktoken-encoding`) and exports as `.tiktoken`.

A tiktoken model is ranks, not an ordered merge list: tiktoken merges, in each piece, the adjacent
pair whose concatenation has the lowest rank, across every split of every token. Merges learned by
sqltok's merge loop and then applied as a merge list do not always encode as tiktoken does on the
exported ranks: tiktoken also makes a new token t = l + r from any other split a + b = t it finds
side by side (a merge (a, bc), learned where the base encodes a pretoken as [a, bc], leaves [ab, c]
in another pretoken alone; tiktoken makes "abc" of both), and merges a new token at once with a
neighbour it completes into an older token. So the extended model is
ranks and sqltok encodes it with rank semantics, as it encodes every `.tiktoken` file: the new tokens
take the ranks after the base's in the merge loop's order. As every new rank is above every old one,
tiktoken first does on each piece exactly what the base did, then applies the new tokens: every
text's ids are tiktoken's, and the merge loop's counts are a close estimate of the frequencies the
tokens then have (the regression report measures the real encoding).
"""
from __future__ import annotations

from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.bpe.tiktoken_file import spec_from_ranks


def extended_ranks(spec: EncoderSpec, new_tokens: list[bytes], specials: str, name: str) -> EncoderSpec:
    """The tiktoken `spec` with `new_tokens` ranked after its ranks, the empty one too (`specials="move"`:
    the special tokens then follow them, in their order) or after every id (`"keep"`)."""
    ranks = {t: i for i, t in enumerate(spec.tokens) if t is not None}
    if spec.empty_rank is not None:  # Whisper's empty token keeps its rank: no new token takes it
        ranks[b""] = spec.empty_rank
    start = len(spec.tokens) if specials == "keep" else max(ranks.values()) + 1
    ranks.update((t, start + k) for k, t in enumerate(new_tokens))
    moved = spec.special_tokens if specials == "keep" else \
        {s: start + len(new_tokens) + k for k, s in enumerate(sorted(spec.special_tokens, key=spec.special_tokens.get))}
    return spec_from_ranks(ranks, spec.pattern, moved, name)
