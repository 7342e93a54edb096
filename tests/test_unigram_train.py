"""Unigram training against its oracle, `sentencepiece` 0.2.3's trainer (`spm_train --num_threads=1`):
the same pieces in the same order, the same types and scores, on fixture corpora of several languages,
the training files, each SentencePiece flag sqltok takes, and hypothesis text; errors as spm_train's."""
import io
import json
import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
import sentencepiece as spm
from sentencepiece.sentencepiece_model_pb2 import ModelProto
from hypothesis import HealthCheck, given, settings, strategies as st

from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError
from sqltok.store import load_model_file, model_names
from sqltok.training.stopwatch import Stopwatch
from sqltok.unigram.model_proto import read_pieces
from sqltok.unigram.sentences import VocabularyTooSmallError, normalize
from sqltok.unigram.spec import NORMALIZATION_RULES, UnigramSpec, UnigramSpecError
from sqltok.unigram.train import train_model_proto, train_unigram

from conftest import TRAIN_DIR

#: ../shared/fixtures/corpora beside the checkout (a worktree sits one folder deeper)
CORPORA = next(p / "shared" / "fixtures" / "corpora" for p in Path(__file__).resolve().parents
               if (p / "shared" / "fixtures" / "corpora").is_dir())


def _lines(path: Path, limit: int) -> list[str]:
    out: list[str] = []
    for line in path.open(encoding="utf-8"):
        out += json.loads(line)["text"].split("\n")
        if len(out) >= limit:
            break
    return out[:limit]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """`corpus(name, lines)`: a text file of the first lines of fixture corpus `name`."""
    folder = tmp_path_factory.mktemp("unigram")

    def get(name: str, limit: int) -> Path:
        path = folder / f"{name}_{limit}.txt"
        if not path.exists():
            if name.endswith("_train"):
                rows = duckdb.sql(f"SELECT text FROM read_json('{TRAIN_DIR / (name + '.jsonl.zst')}')").fetchall()
                lines = [ln for (t,) in rows for ln in t.split("\n")][:limit]
            else:
                lines = _lines(CORPORA / f"{name}.jsonl", limit)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return get


def _oracle(path: Path, vocab_size: int, **flags) -> list[tuple[str, float, int]]:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(path), model_writer=out, model_type="unigram", vocab_size=vocab_size,
                                   num_threads=1, minloglevel=2, **flags)
    proc = spm.SentencePieceProcessor(model_proto=out.getvalue())
    proto = proc.serialized_model_proto()
    return read_pieces(proto)


def _ours(con, path: Path, vocab_size: int, **flags) -> list[tuple[str, float, int]]:
    spec = UnigramSpec(vocab_size=vocab_size, **{k: tuple(v) if isinstance(v, list) else v for k, v in flags.items()})
    proto, _ = train_model_proto(con, Source(path=str(path), text_mode="line"), spec, Stopwatch())
    return read_pieces(proto)


def _assert_same(ours, oracle) -> None:
    assert [(p, t) for p, _, t in ours] == [(p, t) for p, _, t in oracle]
    assert max(abs(a[1] - b[1]) for a, b in zip(ours, oracle)) <= 1e-5


@pytest.mark.parametrize("name,lines,vocab_size", [
    ("en", 3000, 1000), ("de", 700, 800), ("ja", 600, 1500), ("zh", 900, 2000),
    ("ru", 400, 600), ("ar", 500, 700), ("hi", 300, 500), ("ko", 300, 900), ("th", 300, 500),
    ("el", 300, 500), ("code", 2000, 1200), ("en_train", 2500, 2000), ("multi_train", 3000, 2500),
])
def test_training_equals_sentencepiece(con, corpus, name, lines, vocab_size):
    path = corpus(name, lines)
    _assert_same(_ours(con, path, vocab_size), _oracle(path, vocab_size))


FLAG_CASES = [
    {"split_digits": True}, {"split_by_number": False}, {"split_by_unicode_script": False},
    {"split_by_whitespace": False}, {"treat_whitespace_as_suffix": True}, {"byte_fallback": True},
    {"user_defined_symbols": ["<sep>", "the"], "control_symbols": ["<cls>"]},
    {"normalization_rule_name": "nfkc"}, {"normalization_rule_name": "identity"},
    {"normalization_rule_name": "nmt_nfkc_cf"}, {"add_dummy_prefix": False},
    {"remove_extra_whitespaces": False}, {"max_sentencepiece_length": 4}, {"character_coverage": 0.98},
    {"seed_sentencepiece_size": 3000}, {"shrinking_factor": 0.6}, {"num_sub_iterations": 1},
    {"max_sentence_length": 200},
]


@pytest.mark.parametrize("flags", FLAG_CASES, ids=lambda f: ",".join(f))
def test_each_flag_equals_sentencepiece(con, corpus, flags):
    path = corpus("multi_train", 1200)
    _assert_same(_ours(con, path, 1500, **flags), _oracle(path, 1500, **flags))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\n\r▅"), min_size=1, max_size=40),
                min_size=20, max_size=80))
def test_hypothesis_corpora_equal_sentencepiece(con, tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("hyp") / "c.txt"
    path.write_text("\n".join(lines + ["the quick brown fox", "jumps over the lazy dog"] * 10) + "\n",
                    encoding="utf-8")
    try:
        oracle = _oracle(path, 60, hard_vocab_limit=True)
    except RuntimeError as e:  # the oracle refuses: so must sqltok
        with pytest.raises(SqltokError):
            _ours(con, path, 60)
        assert "Vocabulary size" in str(e)
        return
    _assert_same(_ours(con, path, 60), oracle)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=60),
       st.sampled_from(NORMALIZATION_RULES), st.booleans(), st.booleans())
def test_normalizer_equals_sentencepiece(text, rule, dummy, extra):
    oracle = spm.SentencePieceNormalizer(rule_name=rule, add_dummy_prefix=dummy, remove_extra_whitespaces=extra,
                                         escape_whitespaces=True)
    spec = UnigramSpec(normalization_rule_name=rule, add_dummy_prefix=dummy, remove_extra_whitespaces=extra)
    assert normalize(pa.array([text]), spec).to_pylist() == [oracle.normalize(text)]


def test_a_vocabulary_too_small_for_the_characters_says_so(con, corpus):
    path = corpus("ja", 300)
    with pytest.raises(RuntimeError, match="Vocabulary size is smaller than required_chars"):
        _oracle(path, 100)
    with pytest.raises(VocabularyTooSmallError, match="Vocabulary size is smaller than required_chars. 100 vs"):
        _ours(con, path, 100)


def test_a_vocabulary_too_large_for_the_corpus_says_so(con, corpus):
    path = corpus("de", 40)
    with pytest.raises(RuntimeError, match="Vocabulary size too high"):
        _oracle(path, 5000)
    with pytest.raises(SqltokError, match=r"Vocabulary size too high \(5000\)"):
        _ours(con, path, 5000)


@pytest.mark.parametrize("flags,message", [
    ({"character_coverage": 0.5}, "character_coverage"), ({"shrinking_factor": 0.99}, "shrinking_factor"),
    ({"normalization_rule_name": "nfd"}, "'nfd' is not one sqltok implements"),
    ({"user_defined_symbols": ("<unk>",)}, "must not be defined"),
    ({"control_symbols": ("a", "a")}, "duplicated"),
])
def test_bad_flags_are_named(flags, message):
    with pytest.raises(UnigramSpecError, match=message):
        UnigramSpec(vocab_size=100, **flags)


def test_a_failed_run_leaves_the_database_as_it_was(con, corpus):
    path = corpus("ja", 300)
    tables = con.execute("SELECT count(*) FROM duckdb_tables()").fetchall()
    with pytest.raises(VocabularyTooSmallError):
        train_unigram(con, Source(path=str(path), text_mode="line"), "ja", UnigramSpec(vocab_size=100))
    assert model_names(con) == []
    assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == tables
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchall()[0][0] == 0


def test_runs_at_once_on_cursors_share_the_memory_settings_and_give_them_back(corpus):
    """The allocators' settings a run changes are the process's: two runs at once on cursors of one
    connection each get their own model, and what was set before is set again after both."""
    source = Source(path=str(corpus("de", 700)), text_mode="line")
    con = duckdb.connect(config={"allocator_background_threads": False})
    pool = pa.default_memory_pool()
    barrier, errors = threading.Barrier(2, timeout=60), []

    def train(name: str, size: int) -> None:
        try:
            barrier.wait()
            train_unigram(con.cursor(), source, name, UnigramSpec(vocab_size=size))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=train, args=(f"u{size}", size)) for size in (600, 800)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert con.execute("SELECT current_setting('allocator_background_threads')").fetchall() == [(False,)]
    assert pa.default_memory_pool().backend_name == pool.backend_name
    alone = duckdb.connect()
    for size in (600, 800):
        train_unigram(alone, source, f"u{size}", UnigramSpec(vocab_size=size))
        assert load_model_file(con, f"u{size}").content == load_model_file(alone, f"u{size}").content


def test_the_stored_model_is_the_oracle_model(con, corpus):
    path = corpus("de", 700)
    train_unigram(con, Source(path=str(path), text_mode="line"), "de", UnigramSpec(vocab_size=800))
    kept = load_model_file(con, "de")
    assert (kept.method, kept.kind) == ("unigram", "sentencepiece")
    ours = spm.SentencePieceProcessor(model_proto=kept.content)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(path), model_writer=out, model_type="unigram", vocab_size=800,
                                   num_threads=1, minloglevel=2)
    oracle = spm.SentencePieceProcessor(model_proto=out.getvalue())
    held = _lines(CORPORA / "de.jsonl", 2000)[700:]
    assert [ours.encode(t) for t in held] == [oracle.encode(t) for t in held]
    assert ours.normalize("  Größe  ① ﬁ ") == oracle.normalize("  Größe  ① ﬁ ")
    ours_spec, oracle_spec = ModelProto(), ModelProto()
    ours_spec.ParseFromString(kept.content)
    oracle_spec.ParseFromString(oracle.serialized_model_proto())
    assert ours_spec.normalizer_spec.precompiled_charsmap == oracle_spec.normalizer_spec.precompiled_charsmap
    assert ours_spec.normalizer_spec.name == oracle_spec.normalizer_spec.name == "nmt_nfkc"
    assert ours_spec.trainer_spec.model_type == oracle_spec.trainer_spec.model_type


@pytest.mark.parametrize("flags", [{}, {"add_dummy_prefix": False}, {"split_by_whitespace": False},
                                   {"add_dummy_prefix": False, "treat_whitespace_as_suffix": True}],
                         ids=lambda f: ",".join(f) or "defaults")
def test_lines_that_normalize_to_nothing_reorder_as_in_sentencepiece(con, tmp_path, flags):
    """spm_train drops such a line by moving its last sentence into its place: the order decides which
    boundary nodes the suffix tree has (and, without whitespace splitting, the order EM sums in)."""
    lines = _lines(CORPORA / "es.jsonl", 900)
    lines = [" \t  " if i % 7 == 3 else ln for i, ln in enumerate(lines)] + ["  "] * 3
    path = tmp_path / "es.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _assert_same(_ours(con, path, 1200, **flags), _oracle(path, 1200, **flags))


@pytest.mark.parametrize("flags", [{}, {"normalization_rule_name": "identity"}], ids=lambda f: ",".join(f) or "defaults")
def test_a_crlf_file_is_read_as_spm_train_reads_it(con, tmp_path, flags):
    """spm_train keeps each line's "\\r": a blank CRLF line is a sentence that normalizes to nothing
    (and is dropped with the reordering), and identity keeps the "\\r" in the text."""
    lines = _lines(CORPORA / "en.jsonl", 1200)
    path = tmp_path / "crlf.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    assert "" in lines
    _assert_same(_ours(con, path, 800, **flags), _oracle(path, 800, **flags))
