"""Rows encoded with HF's added tokens matched first, for the families whose encoder does not match
them itself (WordPiece, SentencePiece tokenizer.json): HF `AddedVocabulary::extract_and_normalize`
around any encoder of texts.

The tokens matched in the raw text (`normalized: false`) cut each row; the segments between them are
normalized and cut again by the `normalized` tokens (their content in normalized form); the model
encodes each segment left as a text of its own (so the text after a token starts a new word, as in
HF), and each row's ids are its segments' ids and its tokens in order. The cutting and the joining
are `sqltok.native._added_split` (no GIL); the encoding is the family's own, over all segments of
all rows at once.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from sqltok.added_tokens import AddedTokenFlags
from sqltok.native._added_split import AddedSplitter

Encode = Callable[[pa.Array], pa.Array]


class AddedRows:
    """The added tokens of one tokenizer and how its texts are normalized."""

    def __init__(self, special: Mapping[str, int], added: Mapping[str, int], flags: Mapping[str, AddedTokenFlags],
                 normalize_one: Callable[[str], str] | None = None) -> None:
        """`special`, `added`: token content -> id (special tokens are matched where allowed, the
        others always); `flags`: those tokens' HF flags that are not the defaults; `normalize_one`:
        the tokenizer's normalizer of one str (None: it has none), for the `normalized` tokens'
        content."""
        tokens = []
        for table, special_ in ((special, True), (added, False)):
            for content, tid in table.items():
                f = flags.get(content, AddedTokenFlags())
                if f.normalized and normalize_one is not None:
                    content = normalize_one(content)
                tokens.append((tid, content, special_, f))
        self.splitter = AddedSplitter(tokens)
        self.normalizes = normalize_one is not None
        self.always = bool(added)

    def encode(self, texts: pa.Array, allowed, encode: Encode, normalize: Encode | None = None,
               encode_normalized: Encode | None = None, before: Sequence[int] = (),
               after: Sequence[int] = (), mark_first: bool = False) -> pa.Array:
        """Ids (large_list<int32>) of a string array, `before` and `after` around each row, NULL
        staying NULL. `encode`: the family's encoder of texts (normalizing them itself); with
        `mark_first` it is given, after the texts, which of them is the text a row starts with (a
        boolean array: false after a token). With a normalizer and `normalized` tokens,
        `normalize` (texts -> normalized texts) and `encode_normalized` (the encoder of texts
        normalized already). `allowed`: None, "all" or a set of special token ids."""
        split = self.splitter
        if not self.normalizes or not split.has("normalized"):
            segments, ids, rows = split.split_arrow(texts, "both", allowed)  # (under a normalizer: no normalized pass)
            encoded = encode(segments, _row_starts(len(ids), rows)) if mark_first else encode(segments)
            return split.join(encoded, ids, rows, texts.is_valid(), list(before), list(after))
        if mark_first:
            raise ValueError("mark_first is for tokenizers whose normalized tokens are matched in the raw text")
        segments, ids, rows = split.split_arrow(texts, "raw", allowed)
        parts, part_ids, part_rows = split.split_arrow(normalize(segments), "normalized", allowed)
        inner = split.join(encode_normalized(parts), part_ids, part_rows)
        return split.join(inner, ids, rows, texts.is_valid(), list(before), list(after))


def _row_starts(n_segments: int, rows: np.ndarray) -> pa.Array:
    """Which segments a row starts with (a token's segment is empty: what follows it starts none)."""
    first = np.zeros(n_segments, bool)
    first[rows[:-1][rows[:-1] < rows[1:]]] = True
    return pa.array(first)
