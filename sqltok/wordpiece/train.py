"""WordPiece training inside DuckDB, as HF's `BertWordPieceTokenizer().train(...)` does it, in stages:
prepare the corpus, count its words (`GROUP BY` over `sqltok_bert_words`: sqltok's BERT normalizer and
BERT pre-tokenizer), merge (the Cython loop of `_train.pyx`, HF's WordPieceTrainer semantics), store
(the tokenizer.json HF would save, kept whole in the database in one transaction, so a failed or
interrupted run leaves the database as it was). The run's work tables are dropped however it ends.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from sqltok.corpus.sources import Source
from sqltok.duck import arrow_table, column
from sqltok.interrupts import interruptible
from sqltok.normalizers.bert import bert_switches
from sqltok.progress import Progress
from sqltok.register import register
from sqltok.store import ModelFile, check_new_name, delete_rows, ensure_schema, save_model_file, transaction
from sqltok.training.corpus import prepare_corpus
from sqltok.training.counting import Units, count_units
from sqltok.training.stopwatch import Stopwatch
from sqltok.training.work_tables import WorkTables
from sqltok.wordpiece._train import train_wordpiece as _merge_loop
from sqltok.wordpiece.train_settings import WordPieceSettings


@dataclass
class WordPieceReport:
    """What a WordPiece training run did: the corpus it saw and the time each stage took (seconds)."""

    model: str
    documents: int
    null_documents: int
    empty_documents: int
    bytes: int
    unique_words: int
    words: int
    merges: int
    vocab_size: int
    seconds: dict[str, float] = field(default_factory=dict)


def word_units(settings: WordPieceSettings) -> Units:
    """BERT words: the normalizer's switches, then the pre-tokenizer; long documents are cut after
    line feeds (whitespace to both, so no word crosses a cut)."""
    switches = ", ".join("true" if s else "false" for s in bert_switches(
        settings.clean_text, settings.handle_chinese_chars, settings.strip_accents, settings.lowercase))
    return Units("word", f"sqltok_bert_words(text, {switches})", "lines")


def learn_vocabulary(words, counts, settings: WordPieceSettings, progress: bool = False,
                     continuing_order: list[str] | None = None) -> tuple[list[str], int]:
    """The vocabulary (by id) and the number of merges HF's WordPieceTrainer learns from unique
    `words` (in UTF-8 byte order) and their `counts`; `continuing_order` as for `_train.train_wordpiece`."""
    bar = Progress("merging", settings.vocab_size, "tokens") if progress else None
    out = _merge_loop(words, counts, settings.vocab_size, min_frequency=settings.min_frequency,
                      limit_alphabet=-1 if settings.limit_alphabet is None else settings.limit_alphabet,
                      initial_alphabet=list(settings.initial_alphabet), special_tokens=list(settings.special_tokens),
                      prefix=settings.prefix, continuing_order=continuing_order,
                      progress=None if bar is None else (lambda done, size: bar.update(size)))
    if bar is not None:
        bar.close()
    return [t.decode() for t in out["tokens"].to_pylist()], out["merges"]


def tokenizer_json(tokens: list[str], settings: WordPieceSettings) -> bytes:
    """The tokenizer.json HF's trained BertWordPieceTokenizer saves for this vocabulary."""
    vocab = {t: i for i, t in enumerate(tokens)}
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in settings.special_tokens],
        "normalizer": {"type": "BertNormalizer", "clean_text": settings.clean_text,
                       "handle_chinese_chars": settings.handle_chinese_chars,
                       "strip_accents": settings.strip_accents, "lowercase": settings.lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": settings.prefix, "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": settings.unk_token, "continuing_subword_prefix": settings.prefix,
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }
    return json.dumps(doc, ensure_ascii=False, indent=2).encode()


@interruptible
def train_wordpiece(con: duckdb.DuckDBPyConnection, source: Source | str, vocab_size: int, model: str, *,
                    settings: WordPieceSettings | None = None, replace: bool = False,
                    progress: bool = False) -> WordPieceReport:
    """Train a WordPiece model named `model` on `source` (a SQL query with a `text` column, or a
    `Source`) and keep it in `con`'s database as the tokenizer.json HF would save; `settings` default
    to `BertWordPieceTokenizer().train`'s (`vocab_size` overrides theirs).

    The vocabulary is HF's, with the ids of the `##` characters in tokenizers PR #2066's order.
    """
    settings = (settings or WordPieceSettings()).with_vocab_size(vocab_size)
    register(con)
    ensure_schema(con)
    check_new_name(con, model, replace)
    watch = Stopwatch(con if progress else None)
    with WorkTables(con) as work:
        with watch("count_words"):
            corpus = prepare_corpus(con, source)
            counts = count_units(con, corpus.query, word_units(settings), work.table("word_counts"))
        with watch("merge"):
            table = arrow_table(con, f"SELECT word, n FROM {counts.table} ORDER BY word")
            tokens, merges = learn_vocabulary(column(table, 0), column(table, 1), settings, progress)
        with watch("store"), transaction(con):
            delete_rows(con, model)
            save_model_file(con, model, ModelFile("wordpiece", "hf-wordpiece", tokenizer_json(tokens, settings)),
                            len(tokens), settings.as_dict(), corpus.stats.model_info())
    stats = corpus.stats
    return WordPieceReport(model, stats.documents, stats.null_documents, stats.empty_documents, stats.bytes,
                           counts.unique, counts.total, merges, len(tokens), watch.seconds)
