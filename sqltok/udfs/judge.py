"""What judging tokenizers needs in SQL besides encoding: `dominant_script(text)`,
`sqltok_vocabulary(name)` (a tokenizer's whole vocabulary as one list of
STRUCT(id, token BLOB, text VARCHAR, special BOOLEAN) to `unnest`; call it on a constant name),
`sqltok_vocab_size(name)` (how many ids have a token, special ones included) and `sqltok_word_splits(name, text, ids)` (STRUCT(words, split): the text's words and how many of them
two or more of its tokens overlap)."""
from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.tokenizer import Tokenizer
from sqltok.named_tokenizers import named_tokenizers
from sqltok.pretokenizer._scripts import dominant_script_arrow
from sqltok.pretokenizer._words import word_splits_arrow, words_arrow
from sqltok.vocabulary import ENTRY, token_lengths, vocabulary
from sqltok.wordpiece.tokenizer import WordPieceTokenizer

from .define import define
from .by_model import by_model

SPLITS = pa.struct([("words", pa.int64()), ("split", pa.int64())])


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
    define(con, "sqltok_vocab_size", lambda names: by_model(
        names, names, lambda n, rows: pa.array([len(vocabulary(reg.get(n)))] * len(rows), pa.int64()), pa.int64()),
        [varchar], bigint)
    define(con, "sqltok_word_splits", splits, [varchar, varchar, duckdb.list_type(duckdb.sqltype("INTEGER"))],
           duckdb.struct_type({"words": bigint, "split": bigint}))
