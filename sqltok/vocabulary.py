"""A tokenizer's vocabulary as Arrow: every id that has a token, its bytes, its text and whether it
is special; and every id's token length in bytes. Built once per loaded tokenizer."""
from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.tokenizer import Tokenizer

ENTRY = pa.struct([("id", pa.int32()), ("token", pa.large_binary()), ("text", pa.large_string()),
                   ("special", pa.bool_())])
_vocabularies: "weakref.WeakKeyDictionary[Tokenizer, pa.StructArray]" = weakref.WeakKeyDictionary()
_lengths: "weakref.WeakKeyDictionary[Tokenizer, bytes]" = weakref.WeakKeyDictionary()


def vocabulary(tok: Tokenizer) -> pa.StructArray:
    """Every id of `tok` that has a token, with its bytes, its text (bytes that are not UTF-8 on their
    own as U+FFFD; a WordPiece token as written, `##` included) and whether it is a special token.
    Built once per tokenizer."""
    entries = _vocabularies.get(tok)
    if entries is None:
        texts, tokens = tok.token_strings(), tok.token_bytes_array()
        ids = pa.array(range(tok.n_vocab), pa.int32())
        specials = set(tok.special_tokens.values())
        special = pa.array([i in specials for i in range(tok.n_vocab)], pa.bool_())
        entries = pa.StructArray.from_arrays([ids, tokens, texts, special], fields=list(ENTRY))
        entries = entries.filter(tokens.is_valid())
        _vocabularies[tok] = entries
    return entries


def token_lengths(tok: Tokenizer) -> bytes:
    """Every id's token length in bytes, int32 native order (0 for an id without a token)."""
    lengths = _lengths.get(tok)
    if lengths is None:
        vocab = vocabulary(tok)
        by_id = np.zeros(tok.n_vocab, dtype=np.int32)
        by_id[vocab.field("id").to_numpy()] = pc.binary_length(vocab.field("token")).to_numpy()
        lengths = _lengths[tok] = by_id.tobytes()
    return lengths
