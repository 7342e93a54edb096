"""What judging tokenizers needs in SQL besides encoding: `dominant_script(text)`,
`sqltok_vocabulary(name)` (a tokenizer's whole vocabulary as one list of
STRUCT(id, token BLOB, text VARCHAR, special BOOLEAN) to `unnest`; call it on a constant name),
`sqltok_vocab_size(name)` (how many ids have a token, special ones included),
`sqltok_pretoken_count(text)` (pretokens of the GPT-4o pattern) and `sqltok_tally(name, text, grp)`
(what `sqltok_evaluate` needs of one text and tokenizer, from one encode: STRUCT(tokens, words, split,
ids, counts) with the text's tokens, words and words two or more tokens overlap, and the distinct ids
of all the texts of group `grp` (BIGINT) in the same batch with how often each occurs, on the first
such row, empty lists on the others: what a sum over all rows needs, in a few times fewer rows)."""
from __future__ import annotations

import weakref

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.threads import default_threads
from sqltok.tokenizer import Tokenizer
from sqltok.named_tokenizers import named_tokenizers
from sqltok.native._id_counts import id_counts_arrow
from sqltok.pretokenizer._pretokenize import pretoken_counts_arrow
from sqltok.pretokenizer._scripts import dominant_script_arrow
from sqltok.pretokenizer._words import distinct_words_arrow, token_spans, word_splits_arrow
from sqltok.sentencepiece.tokenizer import SentencePieceTokenizer
from sqltok.vocabulary import ENTRY, vocabulary
from sqltok.wordpiece._word_splits import WordPieceWordSplits
from sqltok.wordpiece.tokenizer import WordPieceTokenizer

from .define import define
from .by_model import by_model

SPLITS = pa.struct([("words", pa.int64()), ("split", pa.int64())])
TALLY = pa.struct([("tokens", pa.int64()), *SPLITS, ("ids", pa.large_list(pa.int32())),
                   ("counts", pa.large_list(pa.int32()))])
_SPACES = pa.array([c for c in map(chr, range(0x3001)) if c.isspace()], pa.large_string())  # str.split's
_kernels: "weakref.WeakKeyDictionary[WordPieceTokenizer, WordPieceWordSplits]" = weakref.WeakKeyDictionary()
_spans: "weakref.WeakKeyDictionary[Tokenizer, bytes]" = weakref.WeakKeyDictionary()


def word_splits(tok: Tokenizer, texts: pa.Array, ids: pa.Array) -> pa.StructArray:
    """Words and split words of each text (0 and 0 for NULL), from the document's own ids.
    Byte-level tokenizers: the tokens overlapping each word. WordPiece, whose tokens are of
    normalized text: the pre-tokens each word holds (see `_word_splits.pyx`), and in the rows
    where those do not line up with the ids, each distinct word encoded alone. SentencePiece, whose
    pieces do not cross a word's "▁": each distinct word encoded alone, as it stands after a space."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    ids = ids.cast(pa.large_list(pa.int32()))
    if isinstance(tok, SentencePieceTokenizer):
        words, split = _alone_splits(tok, texts, after_space=not tok.normalize("x").startswith("▁"))
        return pa.StructArray.from_arrays([pa.array(words), pa.array(split)], fields=list(SPLITS))
    if not isinstance(tok, WordPieceTokenizer):
        if tok.normalizer == "NFC":  # the ids are of the normalized text
            texts = pc.utf8_normalize(texts, form="NFC")
        words, split = word_splits_arrow(texts, ids, _token_spans(tok), default_threads())
        return pa.StructArray.from_arrays([words, split], fields=list(SPLITS))
    words, split, redo = _wordpiece_kernel(tok).splits(texts, ids, default_threads())
    rows = np.flatnonzero(redo)
    if rows.size:
        split[rows] = _alone_splits(tok, texts.take(pa.array(rows)))[1]
    return pa.StructArray.from_arrays([pa.array(words), pa.array(split)], fields=list(SPLITS))


def _token_spans(tok: Tokenizer) -> bytes:
    """Every id's token length and shape for `word_splits_arrow`, built on first use."""
    spans = _spans.get(tok)
    if spans is None:
        spans = _spans[tok] = token_spans(tok.token_bytes_array())
    return spans


def _wordpiece_kernel(tok: WordPieceTokenizer) -> WordPieceWordSplits:
    """The split-word kernel of `tok`, built on first use."""
    kernel = _kernels.get(tok)
    if kernel is None:
        spec = tok.spec
        kernel = _kernels[tok] = WordPieceWordSplits(spec.normalizer, spec.prefix.encode(),
                                                     [t.encode() for t in spec.tokens], len(spec.single[0]),
                                                     len(spec.single[1]))
    return kernel


def _alone_splits(tok: Tokenizer, texts: pa.Array, after_space: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(words, split words) of each text with each distinct word of the batch encoded alone, once,
    its post-processor's tokens not counted. `after_space` (a model without a dummy prefix): each
    word encoded after a space, as it stands in the text, but bare where a text starts with it."""
    distinct, numbers, ends = distinct_words_arrow(texts)
    numbers, ends = numbers.to_numpy(), ends.to_numpy()
    spaced = pc.binary_join_element_wise(pa.scalar(" ", distinct.type), distinct, pa.scalar("", distinct.type)) \
        if after_space else distinct  # " " + word, joined with no separator
    is_split = _is_split(tok, spaced)
    split = np.diff(np.concatenate([[0], np.cumsum(is_split[numbers], dtype=np.int64)])[ends], prepend=0)
    if after_space:
        firsts = np.concatenate([[0], ends[:-1]])
        starts = pc.utf8_slice_codeunits(texts, 0, 1)
        rows = np.flatnonzero((ends > firsts) & ~pc.is_in(starts, value_set=_SPACES).to_numpy(zero_copy_only=False))
        words = numbers[firsts[rows]]
        split[rows] += _is_split(tok, distinct.take(pa.array(words))).astype(np.int64) - is_split[words]
    return np.diff(ends, prepend=0), split


def _is_split(tok: Tokenizer, words: pa.Array) -> np.ndarray:
    """Whether each word encodes alone to two or more tokens, the post-processor's not counted."""
    counts = pc.subtract(tok.encode_arrow(words, counts_only=True), tok.token_count(""))
    return pc.greater_equal(counts, 2).to_numpy(zero_copy_only=False)


def tally(tok: Tokenizer, texts: pa.Array, groups: pa.Array) -> pa.StructArray:
    """Tokens, words and split words of each text, and the distinct ids and their counts of each
    group's texts (`groups`, int64) on its first row (see the module), the texts encoded once; a
    NULL text has 0 tokens and words and NULL lists."""
    ids = tok.encode_arrow(texts)
    splits = word_splits(tok, texts, ids)
    distinct, counts = id_counts_arrow(ids, tok.n_vocab, groups, default_threads())
    tokens = pc.list_value_length(ids).cast(pa.int64()).fill_null(0)
    return pa.StructArray.from_arrays([tokens, *splits.flatten(), distinct, counts], fields=list(TALLY))


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

    def tallies(names: pa.Array, texts: pa.Array, groups: pa.Array) -> pa.Array:
        texts, groups = (a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in (texts, groups))
        rows = pa.StructArray.from_arrays([texts, groups], ["text", "group"])
        return by_model(names, rows, lambda n, r: tally(reg.get(n), r.field("text"), r.field("group")), TALLY)

    define(con, "dominant_script", lambda texts: dominant_script_arrow(texts), [varchar], varchar)
    define(con, "sqltok_vocabulary", vocabularies, [varchar], duckdb.list_type(entry))
    define(con, "sqltok_vocab_size", lambda names: by_model(
        names, names, lambda n, rows: pa.array([len(vocabulary(reg.get(n)))] * len(rows), pa.int64()), pa.int64()),
        [varchar], bigint)
    define(con, "sqltok_pretoken_count", lambda texts: pretoken_counts_arrow(texts, False, threads=default_threads()),
           [varchar], bigint)
    ids = duckdb.list_type(duckdb.sqltype("INTEGER"))
    define(con, "sqltok_tally", tallies, [varchar, varchar, bigint],
           duckdb.struct_type({"tokens": bigint, "words": bigint, "split": bigint, "ids": ids, "counts": ids}))
