"""One description of a byte-level BPE tokenizer for the encoder, whatever file it came from.

The loaders (`sqltok.bpe.tiktoken_file.read_tiktoken` for `.tiktoken` files,
`sqltok.bpe.hf_read.read_hf` for HF tokenizer.json) fill an `EncoderSpec` so that an encoder
following the rules below gives the same ids as tiktoken's `Encoding.encode_ordinary` and as HF
`Tokenizer.encode(text, add_special_tokens=False)`; whatever a loader cannot express this way it
refuses with `UnsupportedTokenizerError` instead of loading something that encodes differently.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from sqltok.added_tokens import AddedTokenFlags
from sqltok.formats.errors import ModelFormatError
from sqltok.normalizers import normalize

SOURCES = ("tiktoken", "hf")
NORMALIZERS = (None, "NFC")
#: How many ids below the largest one a file may leave without a token (real files leave a few, e.g.
#: before their special tokens): more would cost memory out of proportion to the file.
MAX_UNUSED_IDS = 1 << 20


def id_count(ids: Collection[int]) -> int:
    """The size of the id space of distinct token `ids` (the largest one + 1); ModelFormatError when
    more than MAX_UNUSED_IDS of it would be unused."""
    n = max(ids, default=-1) + 1
    if n - len(ids) > MAX_UNUSED_IDS:
        raise ModelFormatError(f"more than {MAX_UNUSED_IDS} ids below the largest token id have no token "
                               "(a corrupt id?)")
    return n


@dataclass
class EncoderSpec:
    """A byte-level BPE tokenizer as the encoder consumes it.

    Encoding a text, in order:

    1. Added tokens. HF matches the strings of `special_tokens` and of `added_tokens` in the text
       (leftmost match, the longest one where several start at the same place; with their
       `added_flags`: the tokens matched in the raw text first, then the `normalized` ones in the
       text between, `single_word`, `lstrip`, `rstrip`: see `sqltok/native/added_match.pxd`), before
       anything else, with or without `add_special_tokens`; those parts become their ids and the rest
       of the text is cut into segments between them. tiktoken's `encode_ordinary` matches none of
       them (its `encode` only those the caller allows, and raises on the others).
    2. Normalization: with `normalizer == "NFC"` (Qwen), each segment is put in NFC. sqltok puts the
       whole text in NFC before step 1 and matches the content of `normalized` tokens in NFC: the
       same unless NFC changes the text across a token's edge (a combining mark right after it).
    3. Pre-tokenization: the pretokens of a segment are the matches of `pattern` (`regex.finditer`
       semantics, leftmost-first alternation; tiktoken uses fancy-regex, HF Oniguruma, which agree
       on these patterns up to the Unicode version of the \\p{..} tables). With `keep_unmatched`
       (HF's Split `Isolated` and ByteLevel's own regex) each run of text between two matches is a
       pretoken too; without it (tiktoken, HF Split `Removed` + `invert`) such text is dropped. Both
       give the same pretokens for a pattern that matches every character, as all the standard ones
       (GPT-2, cl100k, o200k, Llama 3, Qwen) do.
    4. Each pretoken, as UTF-8 bytes: if `direct` and the bytes are a token, that token's id.
       Otherwise start from `byte_ids` of its bytes (a byte whose entry is -1 is dropped first, as
       HF does when a byte's char is missing from its vocabulary and there is no unk token; the
       tiktoken loader refuses such files), then repeatedly merge the adjacent pair with the lowest
       rank, the leftmost one on ties, into its `result_id`, until no adjacent pair is in `pairs`.

    Why this is exactly tiktoken (`src/lib.rs`, `byte_pair_merge`): tiktoken first looks the whole
    piece up in its ranks (`direct=True`), else starts from one part per byte and repeatedly merges
    the adjacent parts whose concatenated bytes have the lowest rank (scanning left to right with a
    strict `<`, so the leftmost on ties), stopping when no concatenation is a token. It merges only
    when the concatenation is a token, and every single byte is a token (the loader checks), so every
    part is always a token; then the rank tiktoken gives two adjacent parts x, y is rank(x + y) exactly
    when (id(x), id(y)) is in `pairs`, which holds every split of every token into two tokens. So the
    same merges happen in the same order. `pairs` is a superset of the training merges: a token may be
    reached from any split, and splits that can never occur cost nothing.

    Why this is exactly HF (`models/bpe/word.rs`, `Word::merge_all`): HF keeps a heap of candidate
    merges ordered by (rank, position), skips entries that no longer match the symbols, and merges
    until the heap is empty; since a pair's rank and result depend only on the two symbols, that is
    "lowest rank, leftmost first". Its merge table is keyed by the pair of ids, so when a merge is
    listed twice the later (higher) rank wins; the loader keeps the same one. `direct` is HF's
    `ignore_merges` (Llama 3): a pretoken found in the vocabulary is output as is.

    Fields:
        name: a name for the tokenizer ("cl100k_base", or what the caller gave).
        tokens: the bytes of each id; None for ids with no mergeable token (special-only ids, gaps,
            the empty token of Whisper's multilingual.tiktoken).
        pairs: (left_id, right_id, rank, result_id) for every pair the encoder may merge, sorted by
            rank; tokens[result_id] == tokens[left_id] + tokens[right_id]. tiktoken: rank = the id of
            the result, so several pairs share a rank (all splits of one token). HF: rank = index of
            the merge in the merges list, one pair per rank.
        byte_ids: 256 entries, the id of each single byte; -1 where a byte has no token.
        direct: True when a pretoken whose bytes are a token becomes that token without merging.
        pattern: the pre-tokenization regex, the exact string from the source.
        special_tokens: special tokens by string (HF: added tokens with `special: true`).
        normalizer: None or "NFC".
        source: "tiktoken" or "hf".
        added_tokens: HF's non-special added tokens (`special: false`, e.g. Qwen's "<think>"): matched
            in the text exactly like special tokens (step 1); they only differ when decoding.
        keep_unmatched: see step 3.
        added_flags: HF's flags of the special and added tokens that have any (`lstrip`, `rstrip`,
            `single_word`, `normalized`: see `sqltok.added_tokens` and `sqltok/native/added_match.pxd`);
            a token missing here has none.
        empty_rank: tiktoken: the rank of the empty token (Whisper's multilingual.tiktoken has one at
            50256), whose id `tokens` leaves None but which no other token may take.
    """

    name: str
    tokens: list[bytes | None]
    pairs: list[tuple[int, int, int, int]]
    byte_ids: list[int]
    direct: bool
    pattern: str
    special_tokens: dict[str, int]
    normalizer: str | None
    source: str
    added_tokens: dict[str, int] = field(default_factory=dict)
    keep_unmatched: bool = False
    added_flags: dict[str, AddedTokenFlags] = field(default_factory=dict)
    empty_rank: int | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"unknown source {self.source!r}; expected one of {SOURCES}")
        if self.normalizer not in NORMALIZERS:
            raise ValueError(f"unknown normalizer {self.normalizer!r}; expected one of {NORMALIZERS}")
        if len(self.byte_ids) != 256:
            raise ValueError(f"byte_ids must have 256 entries, got {len(self.byte_ids)}")

    @property
    def n_ids(self) -> int:
        """One more than the highest id (len(tokens)); special-only ids included."""
        return len(self.tokens)

    def merge_table(self) -> dict[tuple[int, int], tuple[int, int]]:
        """(left_id, right_id) -> (rank, result_id)."""
        return {(left, right): (rank, result) for left, right, rank, result in self.pairs}

    def token_ids(self) -> dict[bytes, int]:
        """bytes -> id for every mergeable token (for the `direct` lookup)."""
        return {t: i for i, t in enumerate(self.tokens) if t is not None}

    def normalize(self, text: str) -> str:
        """`text` after the normalizer (step 2)."""
        return normalize(text, self.normalizer) if self.normalizer else text

    def validate(self) -> None:
        """Check every invariant stated in the class docstring; ValueError naming the first broken one.

        Linear in the size of the tokenizer (about a second for o200k): the loaders build specs that
        satisfy it, so call it in tests or on specs built by hand.
        """
        n = len(self.tokens)
        seen: dict[bytes, int] = {}
        for i, t in enumerate(self.tokens):
            if t is None:
                continue
            if not isinstance(t, bytes) or not t:
                raise ValueError(f"token {i} must be non-empty bytes or None, got {t!r}")
            if t in seen:
                raise ValueError(f"tokens {seen[t]} and {i} have the same bytes {t!r}")
            seen[t] = i
        for b, i in enumerate(self.byte_ids):
            if i != -1 and not (0 <= i < n and self.tokens[i] == bytes([b])):
                raise ValueError(f"byte_ids[{b}] = {i} is not the token of byte {b}")
            if i == -1 and bytes([b]) in seen:
                raise ValueError(f"byte_ids[{b}] is -1 but token {seen[bytes([b])]} is that byte")
        keys: set[tuple[int, int]] = set()
        last_rank = None
        for p in self.pairs:
            left, right, rank, result = p
            if not all(0 <= i < n and self.tokens[i] is not None for i in (left, right, result)):
                raise ValueError(f"pair {p} refers to an id with no token")
            if self.tokens[left] + self.tokens[right] != self.tokens[result]:
                raise ValueError(f"pair {p}: tokens[{left}] + tokens[{right}] != tokens[{result}]")
            if (left, right) in keys:
                raise ValueError(f"pair ({left}, {right}) is listed twice")
            keys.add((left, right))
            if last_rank is not None and rank < last_rank:
                raise ValueError(f"pairs are not sorted by rank at {p}")
            last_rank = rank
        for what, table in (("special_tokens", self.special_tokens), ("added_tokens", self.added_tokens)):
            for text, i in table.items():
                if not text or not isinstance(i, int) or not 0 <= i < n:
                    raise ValueError(f"{what}[{text!r}] = {i!r} is not an id in 0..{n - 1}")
        both = self.special_tokens.keys() & self.added_tokens.keys()
        if both:
            raise ValueError(f"{sorted(both)} are in both special_tokens and added_tokens")
        stray = self.added_flags.keys() - self.special_tokens.keys() - self.added_tokens.keys()
        if stray:
            raise ValueError(f"added_flags of {sorted(stray)}, which are neither special nor added tokens")
