"""What judging tokenizers needs in SQL besides encoding: `dominant_script(text)` and
`sqltok_vocabulary(name)`, a tokenizer's whole vocabulary as one list of
STRUCT(id, token BLOB, text VARCHAR, special BOOLEAN) to `unnest`."""
from __future__ import annotations

import weakref

import duckdb
import pyarrow as pa

from sqltok.bpe.tokenizer import Tokenizer
from sqltok.named_tokenizers import named_tokenizers
from sqltok.pretokenizer._scripts import dominant_script_arrow
from sqltok.wordpiece.tokenizer import WordPieceTokenizer

from .define import define

ENTRY = pa.struct([("id", pa.int32()), ("token", pa.large_binary()), ("text", pa.large_string()),
                   ("special", pa.bool_())])
_vocabularies: "weakref.WeakKeyDictionary[Tokenizer, pa.StructArray]" = weakref.WeakKeyDictionary()


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


def register(con: duckdb.DuckDBPyConnection) -> None:
    reg = named_tokenizers(con)
    varchar = duckdb.sqltype("VARCHAR")
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

    define(con, "dominant_script", lambda texts: dominant_script_arrow(texts), [varchar], varchar)
    define(con, "sqltok_vocabulary", vocabularies, [varchar], duckdb.list_type(entry))
