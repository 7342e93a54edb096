"""Supermerge candidates (superword training, paper section 2): the maximal runs of two or more
pretokens of a text that a phase-1 model encodes to exactly one token holding a letter (`\\p{L}`), as
lists of token ids, found by the Cython extractor over the phase-1 model's encoder."""
from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa

from sqltok.bpe._candidates import (PretokenUnits, candidate_counts_arrow, pretoken_candidate_counts_arrow,
                                    token_letters)
from sqltok.bpe._candidates import candidates_arrow as extract_candidates
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.errors import SqltokError
from sqltok.threads import default_threads

_letter_masks: "weakref.WeakKeyDictionary[BPETokenizer, bytes]" = weakref.WeakKeyDictionary()


def candidates_arrow(tok: BPETokenizer, texts: pa.Array, threads: int | None = None, keys: bool = False) -> pa.Array:
    """The supermerge candidates of each text under phase-1 model `tok` (list<list<int32>>; with
    `keys`, list<binary>: each candidate's ids as native int32 bytes, see `candidate_ids`)."""
    return extract_candidates(*_phase1_call(tok, texts, threads), keys)


def candidate_counts(tok: BPETokenizer, texts: pa.Array, piece_bytes: int = 0,
                     threads: int | None = None) -> pa.Array:
    """The distinct supermerge candidates of all `texts` under phase-1 model `tok`, as keys (see
    `candidate_ids`) with their counts, on the first row (see `_candidates.candidate_counts_arrow`;
    texts longer than `piece_bytes` > 0 read in pieces)."""
    return candidate_counts_arrow(*_phase1_call(tok, texts, threads), piece_bytes)


def _phase1_call(tok: BPETokenizer, texts: pa.Array, threads: int | None) -> tuple:
    """What the extractor takes from phase-1 model `tok`: its encoder, the texts as it reads them,
    its letter mask and the threads."""
    if tok.has_supermerges:
        raise SqltokError(f"supermerge candidates are found with a phase-1 (BPE) model; {tok.name!r} "
                          "has supermerges")
    threads = threads or default_threads()
    return tok._encoder, tok._prepare(texts, threads), letter_mask(tok), threads


def pretoken_candidate_counts(units: PretokenUnits, texts: pa.Array, piece_bytes: int = 0,
                              threads: int | None = None) -> pa.Array:
    """`candidate_counts` with each pretoken's unit looked up in `units` (a phase-1 run's, see
    `candidate_counts.count_candidates`) instead of encoded."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    return pretoken_candidate_counts_arrow(units, texts, threads or default_threads(), piece_bytes)


def candidate_ids(keys: pa.Array) -> pa.Array:
    """Candidate keys (binary or large_binary: native int32 bytes, as `candidates_arrow(keys=True)`
    makes them) as lists of ids (list<int32> or large_list<int32>, the keys' offset width; NULL stays
    NULL), sharing the keys' buffer where it is aligned."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    large = pa.types.is_large_binary(keys.type)
    width = np.int64 if large else np.int32
    offsets = np.frombuffer(keys.buffers()[1], width)[keys.offset:keys.offset + len(keys) + 1]
    if np.any(np.diff(offsets) % 4):
        raise SqltokError("a candidate key's length is not a multiple of 4 bytes")
    data = keys.buffers()[2] or pa.py_buffer(b"")
    if offsets[0] % 4:  # a slice of keys that do not start on an id: its bytes alone
        data = pa.py_buffer(data.to_pybytes()[offsets[0]:offsets[-1]])
        offsets = offsets - offsets[0]
    ids = pa.Array.from_buffers(pa.int32(), int(offsets[-1]) // 4, [None, data])
    lists = pa.LargeListArray if large else pa.ListArray
    return lists.from_arrays(pa.array(offsets // 4), ids, mask=keys.is_null() if keys.null_count else None)


def letter_mask(tok: BPETokenizer) -> bytes:
    """1 for each token id of `tok` whose bytes are UTF-8 text holding a letter, else 0 (special
    tokens are 0); computed once per tokenizer."""
    mask = _letter_masks.get(tok)
    if mask is None:
        flags = bytearray(token_letters(tok.token_bytes_array()))
        for t in tok.special_tokens.values():
            if t < len(flags):
                flags[t] = 0
        mask = _letter_masks[tok] = bytes(flags)
    return mask
