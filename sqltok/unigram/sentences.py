"""The sentences a Unigram model is trained on, as SentencePiece's trainer reads them: the corpus's
distinct lines counted in DuckDB, normalized (charsmap and whitespace rules), meta pieces in the text
replaced by U+001F, counted again; the alphabet (the most frequent characters up to
`character_coverage`) and the sentences with the other characters marked unknown (U+2585)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.duck import arrow_table, column
from sqltok.errors import SqltokError
from sqltok.freed_memory import release_freed_memory
from sqltok.sql_files import sql_text
from sqltok.training.work_tables import WorkTables
from sqltok.unigram._characters import character_counts, mark_unknown
from sqltok.unigram._charsmap import normalize_array
from sqltok.unigram.spec import UnigramSpec

UNK_MARK = 0x2585
BOUNDARY = "\x1f"  # what meta pieces in the text become


class VocabularyTooSmallError(SqltokError):
    """The vocabulary cannot hold the required characters and meta pieces."""


def charsmap(rule: str) -> bytes:
    """The precompiled charsmap of normalization rule `rule` (b"" for identity)."""
    if rule == "identity":
        return b""
    return files("sqltok.unigram").joinpath(f"data/{rule}.charsmap").read_bytes()


def normalize(texts: pa.Array, spec: UnigramSpec) -> pa.Array:
    """The texts normalized as SentencePiece's trainer does (large_string)."""
    out = normalize_array(texts, charsmap(spec.normalization_rule_name), spec.add_dummy_prefix,
                          spec.remove_extra_whitespaces, True, spec.treat_whitespace_as_suffix)
    return out.cast(pa.large_string())


def replace_meta_pieces(texts: pa.Array, pieces: list[str]) -> pa.Array:
    """Each occurrence of a meta piece in the texts replaced by U+001F, the longest first at each place."""
    pattern = "|".join(re.escape(p) for p in sorted(pieces, key=lambda p: (-len(p.encode()), p)))
    if not pieces or not pc.any(pc.match_substring_regex(texts, pattern)).as_py():
        return texts  # no copy of texts that hold none
    return pc.replace_substring_regex(texts, pattern, BOUNDARY)


@dataclass(frozen=True)
class Sentences:
    """Distinct normalized sentences (unknown characters marked) and their counts; `alphabet` is
    (code point, count) of the required characters, most frequent first; `followers` (sid, lo, hi):
    the least and the greatest first byte of the sentences after each one in the trainer's order (256
    at the end); `order` the sentence at each place of the trainer's list of sentences (one per line)."""

    text: pa.Array
    counts: pa.Array
    alphabet: list[tuple[int, int]]
    followers: pa.Table
    order: np.ndarray
    lines: int


def read_sentences(con, query: str, spec: UnigramSpec, work: WorkTables) -> Sentences:
    """Count, normalize and mark the lines of the documents of `query` (a `text` column). Each work
    table is dropped as soon as what it holds has been read, so that at most a few copies of the
    distinct text are alive at once."""
    distinct = work.table("unigram_distinct_lines")
    con.execute(sql_text("unigram_lines").format(target=distinct, source=query, max_length=spec.max_sentence_length))
    release_freed_memory()  # what the query freed, before the table is read
    raw = arrow_table(con, f"SELECT line, n, line_nos FROM {distinct}")  # a row's place is its id
    work.release(distinct)
    release_freed_memory()  # the table, before the Python stages need memory
    if raw.num_rows == 0:
        raise SqltokError("the corpus has no lines spm_train would read (all empty, too long or holding U+2585)")
    distinct_lines = raw.num_rows
    counts_of_rid = column(raw, 1).to_numpy()
    rid_of_line = _scatter(column(raw, 2), np.arange(distinct_lines, dtype=np.int64), int(counts_of_rid.sum()))
    normalized = replace_meta_pieces(normalize(column(raw, 0), spec), [p for p, _ in spec.meta_pieces().values()])
    del raw
    text, counts, sid_of_rid = distinct_sentences(normalized, counts_of_rid)
    del normalized
    if len(text) == 0:
        raise SqltokError("the corpus has no sentences left after normalization")
    alphabet = required_characters(character_counts(text, counts), spec)
    if len(alphabet) + len(spec.meta_pieces()) > spec.vocab_size:
        raise VocabularyTooSmallError(
            f"Vocabulary size is smaller than required_chars. {spec.vocab_size} vs "
            f"{len(alphabet) + len(spec.meta_pieces())}. Increase vocab_size or decrease character_coverage "
            "with --character-coverage.")
    known = np.zeros(0x110000, dtype=np.uint8)
    known[[c for c, _ in alphabet]] = 1
    marked = mark_unknown(text, known).cast(pa.large_string())
    order = trainer_order(sid_of_rid[rid_of_line])
    return Sentences(marked, counts, alphabet, followers(order, marked), order, len(rid_of_line))


def distinct_sentences(texts: pa.Array, n: np.ndarray) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """The distinct non-empty texts (in order of first occurrence), the sum of `n` over the rows of
    each (int64), and the index of each row's text among them (-1 for an empty text)."""
    encoded = pc.dictionary_encode(texts)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    distinct = encoded.dictionary
    index = np.arange(len(distinct), dtype=np.int64)
    empty = pc.index(distinct, "").as_py()
    if empty >= 0:
        index[empty:] -= 1
        index[empty] = -1
        distinct = pa.concat_arrays([distinct[:empty], distinct[empty + 1:]])
    totals = np.bincount(indices, weights=n, minlength=len(index))  # exact: float64 holds any line count
    counts = pa.array(totals[index >= 0].astype(np.int64))
    return distinct, counts, index[indices]


def _scatter(members: pa.Array, ids: np.ndarray, size: int) -> np.ndarray:
    """An int64 array of `size` entries: at each place listed in row i of `members`, ids[i]; -1 at
    the places no row lists."""
    out = np.full(size, -1, dtype=np.int64)
    out[members.flatten().to_numpy()] = np.repeat(ids, pc.list_value_length(members).to_numpy())
    return out


def trainer_order(sids: np.ndarray) -> np.ndarray:
    """The sentence of each place of SentencePiece's sentence list: the lines in order, each one that
    normalized to nothing (-1) replaced by the last one, which is dropped (and checked again)."""
    order = sids.copy()
    size = len(order)
    for p in np.nonzero(order < 0)[0].tolist():
        if p >= size:
            break
        while p < size and order[p] < 0:
            order[p] = order[size - 1]
            size -= 1
    return order[:size]


def followers(order: np.ndarray, text: pa.Array) -> pa.Table:
    """(sid, lo, hi): for each sentence, the least and the greatest first byte of the sentences after
    its places in `order` (256 after the last)."""
    first = pc.binary_slice(text.cast(pa.large_binary()), 0, 1)
    first_byte = np.frombuffer(first.buffers()[2], dtype=np.uint8)[:len(text)].astype(np.int64) \
        if len(text) else np.zeros(0, np.int64)
    follow = np.append(first_byte[order[1:]], 256)
    lo, hi = np.full(len(text), 256, np.int64), np.zeros(len(text), np.int64)
    np.minimum.at(lo, order, follow)
    np.maximum.at(hi, order, follow)
    return pa.table({"sid": np.arange(len(text)), "lo": lo, "hi": hi})


def required_characters(counts: np.ndarray, spec: UnigramSpec) -> list[tuple[int, int]]:
    """(code point, count) of the most frequent characters, in order, until they cover
    `character_coverage` of all characters (compared in float32, as SentencePiece does); NUL and
    space do not count, the U+001F of replaced meta pieces counts but is never required."""
    counts = counts.copy()
    counts[[0, 0x20]] = 0
    total = int(counts.sum())
    if total == 0:
        raise SqltokError("the corpus has no characters left after normalization")
    chars = np.nonzero(counts)[0]
    order = np.lexsort((chars, -counts[chars]))
    coverage_limit = np.float32(spec.character_coverage)
    required: list[tuple[int, int]] = []
    accumulated = 0
    for c in chars[order].tolist():
        if np.float32(accumulated / total) >= coverage_limit:
            break
        accumulated += int(counts[c])
        if c != 0x1F:
            required.append((c, int(counts[c])))
    return required
