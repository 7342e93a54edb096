"""A tiktoken encoding (ranks) as an HF `tokenizers` tokenizer.json, the way `transformers`'
TikTokenConverter writes one: every token in the vocabulary with its rank as id, a merge for every
split of every token into two tokens in the order of the merged token's rank (tiktoken merges the
pair whose concatenation has the lowest rank, HF the lowest-ranked merge present), Split(pattern,
Isolated) + ByteLevel(use_regex=False), a ByteLevel decoder, the special tokens as added tokens and
in the vocabulary (as transformers' conversions of cl100k and o200k have them): HF gives an added token
missing from the vocabulary the next id after the vocabulary's size, not the id the file says, so
special ids after a gap (o200k's <|endofprompt|>, or ids kept below an extension's new tokens) would
move.
Where two splits of one token stand in a piece at once, HF takes the earlier merge and tiktoken the
leftmost pair, as with transformers' conversions; tests/test_extend_tiktoken.py checks them equal on
its corpus.
"""
from __future__ import annotations

import json

from sqltok.bpe.byte_unicode import bytes_to_unicode_str
from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.bpe.hf_write import byte_level_document


def hf_json_from_ranks(spec: EncoderSpec) -> bytes:
    """The tokenizer.json of a tiktoken `spec` (`spec_from_ranks`'s: `pairs` are every split by rank)."""
    names = {i: bytes_to_unicode_str(t) for i, t in enumerate(spec.tokens) if t is not None}
    bpe = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
           "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
           "vocab": {**spec.special_tokens, **{s: i for i, s in names.items()}},
           "merges": [[names[left], names[right]] for left, right, _, _ in spec.pairs]}
    doc = byte_level_document(spec.pattern, spec.special_tokens, bpe)
    return json.dumps(doc, ensure_ascii=False).encode()
