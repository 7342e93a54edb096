"""`sqltok train --method unigram`: SentencePiece 0.2.3's Unigram trainer over a corpus in DuckDB, its
result kept in the store as the `.model` file sentencepiece reads (a `ModelFile` of kind
"sentencepiece"). Stages: read (lines counted, normalized, the alphabet), words (`GROUP BY`), seeds
(suffix array), em and prune (Cython over the distinct words), finalize. A failed run leaves the
database as it was: the work tables are dropped and the model is written in one transaction."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.interrupts import interruptible
from sqltok.register import register
from sqltok.freed_memory import release_freed_memory, returning_freed_memory
from sqltok.store import ModelFile, check_new_name, delete_rows, ensure_schema, save_model_file, transaction
from sqltok.training.corpus import as_source, prepare_corpus
from sqltok.training.stopwatch import Stopwatch
from sqltok.training.work_tables import WorkTables
from sqltok.unigram.em import PieceSet, finalize, run_em
from sqltok.unigram.model_proto import model_proto, vocabulary
from sqltok.unigram.seeds import seed_pieces
from sqltok.unigram.sentences import charsmap, read_sentences
from sqltok.unigram.spec import UnigramSpec
from sqltok.unigram.words import count_words

METHOD, KIND = "unigram", "sentencepiece"


@dataclass
class UnigramReport:
    """What a Unigram run read and made."""

    model: str
    source: str
    vocab_size: int
    lines: int
    sentences: int
    words: int
    seeds: int
    seconds: dict[str, float] = field(default_factory=dict)


def train_model_proto(con, source: Source | str, spec: UnigramSpec, watch: Stopwatch) -> tuple[bytes, UnigramReport]:
    """The serialized ModelProto SentencePiece would train on `source` (one `text` per row, read as
    lines), and the run's figures (the report's model name left empty)."""
    source = as_source(source)
    if source.text_mode == "line":  # spm_train reads a CRLF file's lines with their "\r"
        source = replace(source, strip_cr=False)
    with WorkTables(con) as work, returning_freed_memory(con):
        with watch("read"):
            corpus = prepare_corpus(con, source)
            release_freed_memory()  # what reading the whole source for its statistics freed
            sentences = read_sentences(con, corpus.query, spec, work)
            release_freed_memory()
        with watch("words"):
            words, counts, ends = count_words(con, sentences, spec, work)
            release_freed_memory()  # what the word query freed
        with watch("seeds"):
            pieces, scores = seed_pieces(con, sentences, ends, spec, work)
            lines, n_sentences, alphabet = sentences.lines, len(sentences.text), sentences.alphabet
            del sentences, ends  # the words stand for them from here on
            release_freed_memory()
        model = run_em(PieceSet(pieces, scores), words, counts, spec, watch)
    with watch("finalize"):
        vocab = vocabulary(finalize(model, alphabet, spec), spec)
        if len(vocab) != spec.vocab_size:
            raise SqltokError(f"Vocabulary size too high ({spec.vocab_size}). Please set it to a value <= "
                              f"{len(vocab)}.")
        proto = model_proto(vocab, spec, charsmap(spec.normalization_rule_name), [corpus.stats.source])
    report = UnigramReport("", corpus.stats.source, len(vocab), lines, n_sentences, len(words), len(pieces))
    return proto, report


@interruptible
def train_unigram(con, source: Source | str, name: str, spec: UnigramSpec, replace: bool = False) -> UnigramReport:
    """Train and keep model `name`; an existing model of that name is an error unless `replace`."""
    register(con)  # the corpus is read with sqltok's functions
    ensure_schema(con)
    check_new_name(con, name, replace)
    watch = Stopwatch()
    proto, report = train_model_proto(con, source, spec, watch)
    with transaction(con):
        delete_rows(con, name)
        save_model_file(con, name, ModelFile(METHOD, KIND, proto), report.vocab_size, spec.flags(),
                        {"source": report.source, "documents": report.lines})
    report.model = name
    report.seconds = watch.seconds
    return report
