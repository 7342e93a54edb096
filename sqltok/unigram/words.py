"""The words EM trains on: the sentences cut where whitespace starts a word (or ends one, with
`treat_whitespace_as_suffix`), each distinct (word, whether it ends its sentence) counted with one
`GROUP BY` (the seeds' word text is made of these), EM's words their sums, ordered as SentencePiece
orders them; whole sentences in their order when words are not split by whitespace."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.duck import arrow_table, column
from sqltok.freed_memory import release_freed_memory
from sqltok.sql_files import sql_text
from sqltok.training.work_tables import WorkTables
from sqltok.unigram.sentences import Sentences
from sqltok.unigram.spec import UnigramSpec

#: One word: U+2581 and what follows up to the next one (or the text before the first); as a
#: suffix, what precedes a U+2581 and it (or the text after the last).
PREFIX_WORD = "▁[^▁]*|^[^▁]+"
SUFFIX_WORD = "[^▁]*▁|[^▁]+$"


def count_words(con, sentences: Sentences, spec: UnigramSpec,
                work: WorkTables) -> tuple[pa.Array, pa.Array, pa.Table | None]:
    """(words, counts, ends): EM's words and counts, the most frequent first, ties by bytes, and
    `ends` (word, last, n), how often each word occurs as its sentence's last one (last) or before
    another, each pair with n > 0 once, in the words' byte order. Without `split_by_whitespace`,
    every sentence in the trainer's order, once per line, and no `ends`."""
    if not spec.split_by_whitespace:
        return sentences.text.take(pa.array(sentences.order)), pa.array(np.ones(len(sentences.order), np.int64)), None
    view = work.view("unigram_marked", pa.table({"sentence": sentences.text, "n": sentences.counts}))
    pattern = SUFFIX_WORD if spec.treat_whitespace_as_suffix else PREFIX_WORD
    ends = arrow_table(con, sql_text("unigram_words").format(source=view, pattern=pattern))
    work.release(view)
    release_freed_memory()  # what the query freed
    word = column(ends, 0)  # in byte order: the rows of a word are next to each other
    first = np.flatnonzero(np.concatenate([[True], pc.not_equal(word[1:], word[:-1]).to_numpy(zero_copy_only=False)]))
    totals = np.add.reduceat(column(ends, 2).to_numpy(), first)
    ranked = np.argsort(-totals, kind="stable")  # the most frequent first, ties by bytes
    return word.take(pa.array(first[ranked])), pa.array(totals[ranked]), ends
