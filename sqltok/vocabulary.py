"""A tokenizer's vocabulary as Arrow: every id that has a token, its bytes, its text and whether it
is special. Built once per loaded tokenizer."""
from __future__ import annotations

import weakref

import pyarrow as pa

from sqltok.tokenizer import Tokenizer

ENTRY = pa.struct([("id", pa.int32()), ("token", pa.large_binary()), ("text", pa.large_string()),
                   ("special", pa.bool_())])
_vocabularies: "weakref.WeakKeyDictionary[Tokenizer, pa.StructArray]" = weakref.WeakKeyDictionary()


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
