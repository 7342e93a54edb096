"""WordPiece training against HF tokenizers' WordPieceTrainer (BertWordPieceTokenizer.train).

HF gives the `##` characters their ids in hash order (tokenizers #1794), so two HF runs on the same
text differ, and ties between pairs follow those ids. Every HF run's ids are visible in its
vocabulary, though: replaying them (`continuing_order`) must give that run's vocabulary exactly, in
order, which makes each HF run an exact oracle for the merge loop. sqltok's own order is tokenizers
PR #2066's (words in UTF-8 byte order), checked on the PR's own example.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st
from tokenizers import BertWordPieceTokenizer, Tokenizer as HFTokenizer, normalizers, pre_tokenizers
from tokenizers import models, trainers

from sqltok.cli import main
from sqltok.corpus.sources import Source
from sqltok.duck import arrow_table, column
from sqltok.errors import SqltokError
from sqltok.model_files import export_model
from sqltok.store import load_model_file, model_names
from sqltok.training.corpus import prepare_corpus
from sqltok.training.counting import count_units
from sqltok.training.work_tables import WorkTables
from sqltok.wordpiece import train as wordpiece_train
from sqltok.wordpiece._train import train_wordpiece as merge_loop
from sqltok.wordpiece._words import bert_words_arrow
from sqltok.wordpiece.train import learn_vocabulary, train_wordpiece, word_units
from sqltok.wordpiece.train_settings import WordPieceSettings

from conftest import TRAIN_DIR

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "corpora"
FIXTURES = sorted(TRAIN_DIR.glob("*.jsonl.zst")) + sorted(CORPORA.glob("*.jsonl"))  # CORPORA: when present
#: Text taken from the start of each fixture (whole documents), to keep the suite fast.
FIXTURE_BYTES = 600_000
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _lines_file(fixture: Path, tmp_path: Path) -> Path:
    """The fixture's first documents as a text file, one line each as `--lines` and HF read it."""
    rows = duckdb.sql(f"SELECT text FROM read_json_auto('{fixture}') WHERE text IS NOT NULL").fetchall()
    out, size = [], 0
    for (text,) in rows:
        line = " ".join(text.splitlines())
        out.append(line + "\n")
        size += len(line.encode())
        if size > FIXTURE_BYTES:
            break
    path = tmp_path / (fixture.name.split(".")[0] + ".txt")
    path.write_text("".join(out), encoding="utf-8")
    return path


def _hf_vocab(path: Path, vocab_size: int) -> list[str]:
    hf = BertWordPieceTokenizer()
    hf.train([str(path)], vocab_size=vocab_size, show_progress=False)
    vocab = hf.get_vocab()
    return sorted(vocab, key=vocab.get)


def _replay(hf: list[str], prefix: str = "##") -> dict:
    """What an HF run decided by hash order: the order of its `##` characters and, when it cut the
    alphabet, the characters it kept (kept for sure as `initial_alphabet`)."""
    return {"continuing_order": [t[len(prefix):] for t in hf if t.startswith(prefix) and len(t) == len(prefix) + 1],
            "alphabet": [t for t in hf if len(t) == 1]}


def _sqltok_counts(con, path: Path, settings: WordPieceSettings) -> pa.Table:
    with WorkTables(con) as work:
        corpus = prepare_corpus(con, Source(path=str(path), text_mode="line"))
        counts = count_units(con, corpus.query, word_units(settings), work.table("word_counts"))
        return arrow_table(con, f"SELECT word, n FROM {counts.table} ORDER BY word")


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name.split(".")[0])
def test_every_fixture_gives_the_vocabulary_of_an_hf_run_in_its_order(con, fixture, tmp_path):
    path = _lines_file(fixture, tmp_path)
    hf = _hf_vocab(path, 2000)
    seen = _replay(hf)
    table = _sqltok_counts(con, path, WordPieceSettings())
    words, counts = column(table, 0), column(table, 1)
    limited = len({c for w in words.to_pylist() for c in w}) > 1000
    settings = WordPieceSettings(vocab_size=2000, initial_alphabet=tuple(seen["alphabet"]) if limited else ())
    tokens, _ = learn_vocabulary(words, counts, settings, continuing_order=seen["continuing_order"])
    assert tokens == hf
    # sqltok's own order is a permutation of the same `##` characters (given the same alphabet)
    own, _ = learn_vocabulary(words, counts, settings)
    assert sorted(_replay(own)["continuing_order"]) == sorted(seen["continuing_order"])


def test_words_are_counted_as_hf_counts_them(con, tmp_path):
    path = _lines_file(FIXTURES[0], tmp_path)
    table = _sqltok_counts(con, path, WordPieceSettings())
    hf = BertWordPieceTokenizer()._tokenizer
    expected = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        expected.update(w for w, _ in hf.pre_tokenizer.pre_tokenize_str(hf.normalizer.normalize_str(line)))
    assert dict(zip(*(c.to_pylist() for c in table.columns))) == dict(expected)


TEXT = st.text(st.sampled_from("aabbcdé .,!ÄÖ中文\u0301\t\u00a0-'"), max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=6), st.booleans())
def test_bert_words_are_hf_normalizer_then_pre_tokenizer(texts, lowercase):
    hf_norm = normalizers.BertNormalizer(lowercase=lowercase)
    pre = pre_tokenizers.BertPreTokenizer()
    expected = [[w for w, _ in pre.pre_tokenize_str(hf_norm.normalize_str(t))] for t in texts]
    assert bert_words_arrow(pa.array(texts), True, True, lowercase, lowercase).to_pylist() == expected


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(st.sampled_from("abcab ## .é"), max_size=30), min_size=1, max_size=8),
       st.integers(20, 70), st.integers(0, 3), st.sampled_from([None, 4, 8]))
def test_the_merge_loop_replays_any_hf_run(texts, vocab_size, min_frequency, limit_alphabet):
    hf = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    limit = {} if limit_alphabet is None else {"limit_alphabet": limit_alphabet}
    hf.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIALS, show_progress=False, **limit))
    vocab = hf.get_vocab()
    expected = sorted(vocab, key=vocab.get)
    counts = Counter(w for t in texts for w, _ in hf.pre_tokenizer.pre_tokenize_str(hf.normalizer.normalize_str(t)))
    words = sorted(counts, key=str.encode)
    seen = _replay(expected)
    limited = limit_alphabet is not None and len({c for w in words for c in w}) > limit_alphabet
    out = merge_loop(pa.array(words, pa.string()), pa.array([counts[w] for w in words], pa.int64()), vocab_size,
                     min_frequency=min_frequency, limit_alphabet=-1 if limit_alphabet is None else limit_alphabet,
                     initial_alphabet=seen["alphabet"] if limited else [], special_tokens=SPECIALS,
                     continuing_order=seen["continuing_order"])
    assert [t.decode() for t in out["tokens"].to_pylist()] == expected


def test_the_own_order_is_tokenizers_pr_2066s():
    """PR #2066's example: BpeTrainer with prefix `##`, no special tokens, each word once."""
    words = sorted(["Wel", "come", "to", "the", "Tok", "en", "izers", "libr", "ary"], key=str.encode)
    out = merge_loop(pa.array(words), pa.array([1] * len(words), pa.int64()), 30000)
    assert [t.decode() for t in out["tokens"].to_pylist()] == [
        *"TWabcehiklmnorstyz", "##o", "##k", "##e", "##l", "##r", "##y", "##m", "##n", "##z", "##s", "##i", "##b",
        "##h", "To", "We", "ar", "co", "en", "iz", "li", "to", "th", "##er", "##me", "##br", "Tok", "Wel", "ary",
        "come", "izer", "libr", "the", "izers"]


def test_the_merge_loop_wants_sorted_unique_words():
    with pytest.raises(ValueError, match="byte order"):
        merge_loop(pa.array(["b", "a"]), pa.array([1, 1], pa.int64()), 10)
    with pytest.raises(ValueError, match="byte order"):
        merge_loop(pa.array(["a", "a"]), pa.array([1, 1], pa.int64()), 10)


#: A corpus on which HF itself is deterministic: every word is a prefix of "lowercase", so whatever
#: order HF visits them in, the `##` characters appear as o, w, e, r, c, a, s.
SMALL = "Lowercase LOWERCASE lower, low! lowe lowercas\nlow low lower lowercase.\n" * 3


def test_the_commands_give_bert_word_piece_tokenizers_files(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(SMALL)
    runs = {tuple(_hf_vocab(corpus, 60)) for _ in range(6)}
    assert len(runs) == 1
    db = str(tmp_path / "m.duckdb")
    assert main(["train", str(corpus), "--lines", "--method", "wordpiece", "--vocab-size", "60", "--model", "wp",
                 "--db", db]) == 0
    assert "(wordpiece)" in capsys.readouterr().out
    assert main(["export", "wp", "--format", "vocab", "-o", str(tmp_path / "vocab.txt"), "--db", db]) == 0
    assert (tmp_path / "vocab.txt").read_text().splitlines() == list(runs.pop())
    assert main(["export", "wp", "--format", "hf", "-o", str(tmp_path / "tokenizer.json"), "--db", db]) == 0
    hf = BertWordPieceTokenizer()
    hf.train([str(corpus)], vocab_size=60, show_progress=False)
    ours = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert json.loads(ours.to_str()) == json.loads(hf.to_str())
    text = "Lower LOWEST lowercases, slow!"
    with duckdb.connect(db) as con:
        import sqltok

        sqltok.register(con)
        assert con.execute("SELECT encode('wp', ?)", [text]).fetchall()[0][0] == hf.encode(text).ids


def test_a_trained_model_encodes_in_sql_as_hf_loads_it(con, tmp_path):
    path = _lines_file(FIXTURES[-1], tmp_path)
    report = train_wordpiece(con, Source(path=str(path), text_mode="line"), 1500, "fr")
    assert report.vocab_size == 1500 and report.unique_words > 0
    hf = HFTokenizer.from_str(load_model_file(con, "fr").content.decode())
    texts = path.read_text(encoding="utf-8").splitlines()[:50]
    got = [r[0] for r in con.execute("SELECT encode('fr', text) FROM (SELECT unnest(?) AS text)", [texts]).fetchall()]
    assert got == [e.ids for e in hf.encode_batch(texts)]


def test_options_reach_the_trainer(con, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(SMALL)
    src = Source(path=str(corpus), text_mode="line")
    cased = WordPieceSettings(lowercase=False, special_tokens=("[UNK]",), initial_alphabet=("q",),
                              min_frequency=7, limit_alphabet=None)
    train_wordpiece(con, src, 100, "cased", settings=cased)
    vocab = load_model_file(con, "cased").content.decode()
    doc = json.loads(vocab)
    tokens = sorted(doc["model"]["vocab"], key=doc["model"]["vocab"].get)
    hf = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=False)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.train([str(corpus)], trainers.WordPieceTrainer(vocab_size=100, min_frequency=7, special_tokens=["[UNK]"],
                                                      initial_alphabet=["q"], show_progress=False))
    expected = hf.get_vocab()
    assert tokens[0] == "[UNK]" and "q" in tokens and "L" in tokens
    assert set(tokens) == set(expected)
    assert doc["normalizer"]["lowercase"] is False


def test_bad_settings_are_named():
    with pytest.raises(SqltokError, match="unknown token"):
        WordPieceSettings(special_tokens=("[PAD]",))
    with pytest.raises(SqltokError, match="single characters"):
        WordPieceSettings(initial_alphabet=("ab",))
    with pytest.raises(SqltokError, match="min_frequency"):
        WordPieceSettings(min_frequency=-1)
    with pytest.raises(SqltokError, match="limit_alphabet"):
        WordPieceSettings(limit_alphabet=-5)


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_a_failed_run_leaves_the_database_as_it_was(con, tmp_path, monkeypatch, failure):
    corpus = tmp_path / "c.txt"
    corpus.write_text(SMALL)
    src = Source(path=str(corpus), text_mode="line")
    train_wordpiece(con, src, 40, "wp")
    before = load_model_file(con, "wp").content

    def fail(*args):
        raise failure("stop")

    monkeypatch.setattr(wordpiece_train, "tokenizer_json", fail)
    with pytest.raises(failure):
        train_wordpiece(con, src, 60, "wp", replace=True)
    assert load_model_file(con, "wp").content == before
    assert model_names(con) == ["wp"]
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '__sqltok_%'").fetchall() == [(0,)]


def test_export_formats_fit_the_model(con, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(SMALL)
    train_wordpiece(con, Source(path=str(corpus), text_mode="line"), 40, "wp")
    with pytest.raises(SqltokError, match="--format hf or --format vocab"):
        export_model(con, "wp", tmp_path / "x.model", format="reference")
    from sqltok.bpe.train import train_bpe

    train_bpe(con, Source(path=str(corpus), text_mode="line"), 260, "bpe")
    with pytest.raises(SqltokError, match="writes WordPiece models"):
        export_model(con, "bpe", tmp_path / "v.txt", format="vocab")


def test_characters_tied_at_the_alphabet_limit_drop_higher_code_points_first():
    """HF drops them in hash order; sqltok's rule is fixed: keep the lower code points."""
    out = merge_loop(pa.array(["a", "c", "d", "e"]), pa.array([5, 1, 1, 1], pa.int64()), 100, limit_alphabet=2)
    assert [t.decode() for t in out["tokens"].to_pylist()] == ["a", "c"]
