"""What judging tokenizers needs in SQL besides encoding: `dominant_script(text)`,
`sqltok_vocabulary(name)` (a tokenizer's whole vocabulary as one list of
STRUCT(id, token BLOB, text VARCHAR, special BOOLEAN) to `unnest`; call it on a constant name) and
`sqltok_word_splits(name, text, ids)` (STRUCT(words, split): the text's words and how many of them
two or more of its tokens overlap)."""
from __future__ import annotations

import weakref

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.bpe.tokenizer import Tokenizer
from sqltok.judge._words import word_splits_arrow, words_arrow
from sqltok.named_tokenizers import named_tokenizers
from sqltok.pretokenizer._scripts import dominant_script_arrow
from sqltok.wordpiece.tokenizer import WordPieceTokenizer

from .define import define
from .encode import by_model

ENTRY = pa.struct([("id", pa.int32()), ("token", pa.large_binary()), ("text", pa.large_string()),
                   ("special", pa.bool_())])
SPLITS = pa.struct([("words", pa.int64()), ("split", pa.int64())])
_vocabularies: "weakref.WeakKeyDictionary[Tokenizer, pa.StructArray]" = weakref.WeakKeyDictionary()
_lengths: "weakref.WeakKeyDictionary[Tokenizer, bytes]" = weakref.WeakKeyDictionary()


def vocabulary(tok: Tokenizer) -> pa.StructArray:
    """Every id of `tok` that has a token, with its bytes, its text (bytes that are not UTF-8 on their
    own as U+FFFD; a WordPiece token as written, `##` included) and whether it is a special token.
    Built once per tokenizer."""
    entries = _vocabularies.get(tok)
    if entries is None:
        texts = tok.token_strings()
        if isinstance(tok, WordPieceTokenizer):
            tokens = texts.cast(pa.large_binary())
        else:
            tokens = pa.array([_token_bytes(tok, i) for i in range(tok.n_vocab)], pa.large_binary())
        ids = pa.array(range(tok.n_vocab), pa.int32())
        specials = set(tok.special_tokens.values())
        special = pa.array([i in specials for i in range(tok.n_vocab)], pa.bool_())
        entries = pa.StructArray.from_arrays([ids, tokens, texts, special], fields=list(ENTRY))
        entries = entries.filter(tokens.is_valid())
        _vocabularies[tok] = entries
    return entries


def _token_bytes(tok: Tokenizer, i: int) -> bytes | None:
    try:
        return tok.decode_single_token_bytes(i)
    except ValueError:  # an id without a token (o200k's gap before its special tokens)
        return None


def token_lengths(tok: Tokenizer) -> bytes:
    """Every id's token length in bytes, int32 native order (0 for an id without a token)."""
    lengths = _lengths.get(tok)
    if lengths is None:
        vocab = vocabulary(tok)
        by_id = np.zeros(tok.n_vocab, dtype=np.int32)
        by_id[vocab.field("id").to_numpy()] = pc.binary_length(vocab.field("token")).to_numpy()
        lengths = _lengths[tok] = by_id.tobytes()
    return lengths


def word_splits(tok: Tokenizer, texts: pa.Array, ids: pa.Array) -> pa.StructArray:
    """Words and split words of each text (0 and 0 for NULL). Byte-level tokenizers: from the
    document's own ids. WordPiece, whose tokens are of normalized text: each word encoded alone, its
    post-processor's tokens not counted (the same count, since WordPiece splits at whitespace before
    anything else)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not isinstance(tok, WordPieceTokenizer):
        if tok.normalizer == "NFC":  # the ids are of the normalized text
            texts = pc.utf8_normalize(texts, form="NFC")
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        words, split = word_splits_arrow(texts, ids.cast(pa.large_list(pa.int32())), token_lengths(tok))
        return pa.StructArray.from_arrays([words, split], fields=list(SPLITS))
    flat, owner = words_arrow(texts)
    counts = pc.subtract(tok.encode_arrow(flat, counts_only=True), tok.token_count(""))
    is_split = pc.greater_equal(counts, 2).cast(pa.int64())
    owner = owner.to_numpy()
    words = np.bincount(owner, minlength=len(texts)).astype(np.int64)
    split = np.bincount(owner, weights=is_split.to_numpy(), minlength=len(texts)).astype(np.int64)
    return pa.StructArray.from_arrays([pa.array(words), pa.array(split)], fields=list(SPLITS))


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar = duckdb.sqltype("VARCHAR")
    bigint = duckdb.sqltype("BIGINT")
    entry = duckdb.struct_type({"id": duckdb.sqltype("INTEGER"), "token": duckdb.sqltype("BLOB"),
                                "text": varchar, "special": duckdb.sqltype("BOOLEAN")})

    def vocabularies(names: pa.Array) -> pa.Array:
        if isinstance(names, pa.ChunkedArray):
            names = names.combine_chunks()
        lists = {n: vocabulary(reg.get(n)) for n in set(names.drop_null().to_pylist())}
        parts = [pa.nulls(1, pa.large_list(ENTRY)) if n is None else
                 pa.LargeListArray.from_arrays(pa.array([0, len(lists[n])], pa.int64()), lists[n])
                 for n in names.to_pylist()]
        return pa.concat_arrays(parts)

    def splits(names: pa.Array, texts: pa.Array, ids: pa.Array) -> pa.Array:
        if isinstance(texts, pa.ChunkedArray):
            texts, ids = texts.combine_chunks(), ids.combine_chunks()
        rows = pa.StructArray.from_arrays([texts, ids], names=["text", "ids"])
        return by_model(names, rows, lambda n, r: word_splits(reg.get(n), *r.flatten()), SPLITS)

    define(con, "dominant_script", lambda texts: dominant_script_arrow(texts), [varchar], varchar)
    define(con, "sqltok_vocabulary", vocabularies, [varchar], duckdb.list_type(entry))
    define(con, "sqltok_word_splits", splits, [varchar, varchar, duckdb.list_type(duckdb.sqltype("INTEGER"))],
           duckdb.struct_type({"words": bigint, "split": bigint}))
