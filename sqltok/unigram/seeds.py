"""Seed pieces, SentencePiece 0.2.3's first vocabulary: every character of the sentences (most
frequent first), then the `seed_sentencepiece_size` best substrings from the suffix tree of the
sentences' UTF-8 bytes (score frequency x characters in float32; ties: more bytes first, then by
bytes), all scored by their log share.

SentencePiece joins every sentence occurrence, in its order, with a NUL after each; a node that ends
in NUL counts for the text before it, and such a node exists only where the sentences after the
ones that text ends begin with different bytes. sqltok builds the suffix array over the distinct
sentences once each (frequencies weighted by their counts) and adds those boundary nodes from the
sentences' `followers`, so that memory follows the distinct sentences, with the same result."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydivsufsort import divsufsort, kasai

from sqltok.duck import arrow_table
from sqltok.sql_files import sql_text
from sqltok.training.work_tables import WorkTables
from sqltok.unigram._characters import character_counts
from sqltok.unigram._scores import log_prob
from sqltok.unigram._seeds import frequent_substrings, joined_bytes, piece_is_valid
from sqltok.unigram.sentences import UNK_MARK, Sentences
from sqltok.unigram.spec import UnigramSpec

BOUNDARY_CHAR = 0x1F


def seed_pieces(con, sentences: Sentences, spec: UnigramSpec, work: WorkTables) -> tuple[list[str], np.ndarray]:
    """The seed pieces and their float32 scores."""
    per_char = character_counts(sentences.text, sentences.counts)
    per_char[[UNK_MARK, BOUNDARY_CHAR]] = 0
    present = np.nonzero(per_char)[0]
    order = np.lexsort((present, -per_char[present]))  # most frequent first, ties by code point
    pieces = [chr(c) for c in present[order].tolist()]
    values = per_char[present[order]].astype(np.float32)
    found = _substrings(con, sentences, spec, work)
    chars = pc.utf8_length(found.column("piece")).to_numpy().astype(np.float32)
    score = found.column("n").to_numpy().astype(np.float32) * chars
    ranked = pa.table({"score": score, "bytes": pc.binary_length(found.column("piece").cast(pa.large_binary())),
                       "piece": found.column("piece").cast(pa.large_binary())})
    best = pc.sort_indices(ranked, [("score", "descending"), ("bytes", "descending"), ("piece", "ascending")])
    best = best[:spec.seed_sentencepiece_size]
    pieces += found.column("piece").take(best).to_pylist()
    values = np.concatenate([values, score[best.to_numpy()]])
    return pieces, log_prob(values)


def _substrings(con, sentences: Sentences, spec: UnigramSpec, work: WorkTables) -> pa.Table:
    """(piece, n): the candidates of two characters or more with their frequencies."""
    text, starts = joined_bytes(sentences.text)
    sa = divsufsort(text)
    lcp = kasai(text, sa)
    offsets, lengths, freq = frequent_substrings(text, starts, sentences.counts, sa, lcp, spec.flags())
    del sa, lcp
    data = text.tobytes()
    inner = {data[o:o + n].decode(): int(f) for o, n, f in zip(offsets.tolist(), lengths.tolist(), freq.tolist())}
    view = work.view("unigram_marked_ids", pa.table({"sid": pa.array(np.arange(len(sentences.text))),
                                                     "sentence": sentences.text, "n": sentences.counts}))
    fview = work.view("unigram_followers", sentences.followers)
    across = arrow_table(con, sql_text("unigram_boundary_seeds").format(
        sentences=view, followers=fview, max_length=spec.max_sentencepiece_length))
    flags = spec.flags()
    for w, n in zip(across.column(0).to_pylist(), across.column(1).to_pylist()):
        if "\x00" not in w and piece_is_valid(w, flags):
            inner[w] = inner.get(w, 0) + n
    return pa.table({"piece": pa.array(list(inner), pa.large_string()),
                     "n": pa.array(list(inner.values()), pa.int64())})
