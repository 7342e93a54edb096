"""The words EM trains on: the sentences cut where whitespace starts a word (or ends one, with
`treat_whitespace_as_suffix`), counted with `GROUP BY` and ordered as SentencePiece orders them;
whole sentences in their order when words are not split by whitespace."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from sqltok.duck import arrow_table, column
from sqltok.sql_files import sql_text
from sqltok.training.work_tables import WorkTables
from sqltok.unigram.sentences import Sentences
from sqltok.unigram.spec import UnigramSpec

#: One word: U+2581 and what follows up to the next one (or the text before the first); as a
#: suffix, what precedes a U+2581 and it (or the text after the last).
PREFIX_WORD = "▁[^▁]*|^[^▁]+"
SUFFIX_WORD = "[^▁]*▁|[^▁]+$"


def count_words(con, sentences: Sentences, spec: UnigramSpec, work: WorkTables) -> tuple[pa.Array, pa.Array]:
    """(words, counts), the most frequent first, ties by bytes; without `split_by_whitespace`, every
    sentence in the trainer's order, once per line."""
    if not spec.split_by_whitespace:
        return sentences.text.take(pa.array(sentences.order)), pa.array(np.ones(len(sentences.order), np.int64))
    view = work.view("unigram_marked", pa.table({"sentence": sentences.text, "n": sentences.counts}))
    pattern = SUFFIX_WORD if spec.treat_whitespace_as_suffix else PREFIX_WORD
    table = arrow_table(con, sql_text("unigram_words").format(source=view, pattern=pattern))
    work.release(view)  # the view holds the sentences, which EM does not need
    return column(table, 0), column(table, 1)
