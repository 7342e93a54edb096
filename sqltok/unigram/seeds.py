"""Seed pieces, SentencePiece 0.2.3's first vocabulary: every character of the sentences (most
frequent first), then the `seed_sentencepiece_size` best substrings from the suffix tree of the
sentences' UTF-8 bytes (score frequency x characters in float32; ties: more bytes first, then by
bytes), all scored by their log share.

SentencePiece joins every sentence occurrence, in its order, with a NUL after each; a node that ends
in NUL counts for the text before it, and such a node exists only where the sentences after the
ones that text ends begin with different bytes. sqltok builds the suffix array over the distinct
sentences once each (frequencies weighted by their counts) and adds those boundary nodes from the
sentences' `followers`, so that memory follows the distinct sentences, with the same result.

Where words are split before U+2581 (SentencePiece's default), a piece holds U+2581 at most first, so
each occurrence of a candidate lies inside one word, and whether it is a node depends only on the
byte after it: the word's next one or, at the word's end, the next word's (U+2581's first) or the
sentence's NUL. The suffix tree is then built over the word text (`tree_text`): each distinct word
followed by U+2581 (counted as often as another word follows it) and alone (as often as it ends its
sentence), each entry ended by NUL, which gives the same candidates with the same frequencies from
a quarter to a half of the bytes. A node that reaches into the added U+2581 is no candidate in either
text: it ends inside a character, holds U+2581 after its first character or holds a NUL."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydivsufsort import divsufsort

from sqltok.duck import arrow_table, column
from sqltok.freed_memory import release_freed_memory
from sqltok.sql_files import sql_text
from sqltok.training.work_tables import WorkTables
from sqltok.unigram._characters import character_counts
from sqltok.unigram._scores import log_prob
from sqltok.unigram._seeds import frequent_substrings, gather, joined_bytes, permuted_lcp, piece_is_valid
from sqltok.unigram.sentences import UNK_MARK, Sentences
from sqltok.unigram.spec import UnigramSpec

BOUNDARY_CHAR = 0x1F
WHITESPACE = "▁"


def seed_pieces(con, sentences: Sentences, ends: pa.Table | None, spec: UnigramSpec,
                work: WorkTables) -> tuple[pa.Array, np.ndarray]:
    """The seed pieces (large_string) and their float32 scores; `ends` as `count_words` gives them."""
    pieces, values = _characters(sentences)
    found, score = _best_substrings(con, sentences, tree_text(sentences, ends, spec), spec, work)
    return pa.concat_arrays([pieces, found]), log_prob(np.concatenate([values, score]))


def _characters(sentences: Sentences) -> tuple[pa.Array, np.ndarray]:
    """The characters of the sentences but the unknown mark and U+001F, most frequent first, ties by
    code point, and their counts as float32."""
    per_char = character_counts(sentences.text, sentences.counts)
    per_char[[UNK_MARK, BOUNDARY_CHAR]] = 0
    present = np.nonzero(per_char)[0]
    order = np.lexsort((present, -per_char[present]))
    return pa.array([chr(c) for c in present[order].tolist()], pa.large_string()), \
        per_char[present[order]].astype(np.float32)


def tree_text(sentences: Sentences, ends: pa.Table | None, spec: UnigramSpec) -> tuple[pa.Array, pa.Array]:
    """The texts and counts to build the suffix tree over: the word text of `ends` (`count_words`'s)
    where words are split before U+2581, else the distinct sentences."""
    if ends is None or spec.treat_whitespace_as_suffix:
        return sentences.text, sentences.counts
    word, last = column(ends, 0), column(ends, 1)
    return pc.if_else(last, word, pc.binary_join_element_wise(word, WHITESPACE, "")), column(ends, 2)


def _best_substrings(con, sentences: Sentences, tree: tuple[pa.Array, pa.Array], spec: UnigramSpec,
                     work: WorkTables) -> tuple[pa.Array, np.ndarray]:
    """The `seed_sentencepiece_size` best candidates of two characters or more, best first, and their
    float32 scores: the nodes of the suffix tree of `tree` (texts and counts, from `tree_text`) and
    the boundary candidates of the sentences."""
    across = _boundary_candidates(con, sentences, spec, work)
    release_freed_memory()  # what the boundary queries freed, before the suffix array
    text, starts = joined_bytes(tree[0])
    sa = divsufsort(text)
    plcp = permuted_lcp(text, sa, 4 * spec.max_sentencepiece_length + 1)  # a node deeper has too many characters
    offsets, lengths, score = frequent_substrings(text, starts, tree[1], sa, plcp, spec.flags(), across)
    del sa, plcp
    if across:  # boundary candidates that are no node of their own
        extra = pa.array(list(across), pa.large_binary())
        score = np.concatenate([score, np.array(list(across.values()), np.float32)
                                * pc.utf8_length(extra.cast(pa.large_string())).to_numpy().astype(np.float32)])
        lengths = np.concatenate([lengths, pc.binary_length(extra).to_numpy().astype(np.int32)])
    k = spec.seed_sentencepiece_size
    if len(score) > k:  # every candidate scoring at least the k-th best, ties included
        keep = np.nonzero(score >= np.partition(score, len(score) - k)[len(score) - k])[0]
    else:
        keep = np.arange(len(score))
    inner = keep[keep < len(offsets)]
    strings = gather(text, offsets[inner], lengths[inner])
    if across:
        strings = pa.concat_arrays([strings, extra.take(pa.array(keep[keep >= len(offsets)] - len(offsets)))])
    ranked = pa.table({"score": score[keep], "bytes": lengths[keep], "piece": strings})
    best = pc.sort_indices(ranked, [("score", "descending"), ("bytes", "descending"), ("piece", "ascending")])[:k]
    return strings.take(best).cast(pa.large_string()), score[keep][best.to_numpy()]


def _boundary_candidates(con, sentences: Sentences, spec: UnigramSpec, work: WorkTables) -> dict[bytes, int]:
    """Bytes -> count of the valid texts that end sentences followed by different bytes."""
    view = work.view("unigram_marked_ids", sentences.followers.append_column("sentence", sentences.text)
                     .append_column("n", sentences.counts))
    levels = [work.table("unigram_boundary_level_a"), work.table("unigram_boundary_level_b")]
    con.execute(f"CREATE OR REPLACE TEMP TABLE {levels[1]} (sid BIGINT, w VARCHAR, n BIGINT)")
    found = []
    for k in range(2, spec.max_sentencepiece_length + 1):
        target, alive = levels[k % 2], levels[(k + 1) % 2]
        con.execute(sql_text("unigram_boundary_seeds").format(target=target, alive=alive, k=k, sentences=view))
        release_freed_memory()  # what each query freed: the levels' pages would add up
        level = arrow_table(con, f"SELECT w, sum(n)::BIGINT AS n FROM {target} GROUP BY w")
        if level.num_rows == 0:
            break
        found.append(level)
    for name in (view, *levels):  # nothing of them is needed after the candidates
        work.release(name)
    flags = spec.flags()
    return {w.encode(): n for level in found for w, n in zip(level.column(0).to_pylist(), level.column(1).to_pylist())
            if "\x00" not in w and piece_is_valid(w, flags)}
