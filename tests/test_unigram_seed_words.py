"""The seeds' suffix tree over the word text gives the candidates the tree over the distinct sentences
gives: the same strings with the same float32 scores (what `_best_substrings` ranks), on the training
files, the fixture corpora and hypothesis text rich in repeated and sentence-final words, characters
whose UTF-8 starts as U+2581's does (E2), digits and mixed scripts, under the flags that keep words
split before U+2581; the boundary candidates, found level by level, are those their definition gives."""
import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from sqltok.register import register
from sqltok.training.work_tables import WorkTables
from sqltok.unigram._seeds import piece_is_valid
from sqltok.unigram.seeds import _best_substrings, _boundary_candidates, tree_text
from sqltok.unigram.sentences import read_sentences
from sqltok.unigram.spec import UnigramSpec
from sqltok.unigram.words import count_words

from conftest import TRAIN_DIR
from test_unigram_train import CORPORA


def _assert_same_candidates(con, query: str, spec: UnigramSpec) -> None:
    with WorkTables(con) as work:
        sentences = read_sentences(con, query, spec, work)
        _, _, ends = count_words(con, sentences, spec, work)
        words = tree_text(sentences, ends, spec)
        assert words[0] is not sentences.text  # the word text
        from_sentences = _best_substrings(con, sentences, (sentences.text, sentences.counts), spec, work)
        from_words = _best_substrings(con, sentences, words, spec, work)
    assert from_words[0].to_pylist() == from_sentences[0].to_pylist()
    assert from_words[1].tobytes() == from_sentences[1].tobytes()


@pytest.mark.parametrize("name", ["en_train", "multi_train"])
def test_training_files(con, name):
    _assert_same_candidates(con, f"SELECT text FROM read_json('{TRAIN_DIR / name}.jsonl.zst')", UnigramSpec())


@pytest.mark.parametrize("name", ["ar", "code", "de", "el", "es", "fr", "hi", "ja", "ko", "ru", "th", "zh"])
def test_fixture_corpora(con, name):
    _assert_same_candidates(con, f"SELECT text FROM read_json('{CORPORA / name}.jsonl')", UnigramSpec())


FLAG_CASES = [
    {"add_dummy_prefix": False}, {"remove_extra_whitespaces": False}, {"split_digits": True},
    {"split_by_number": False}, {"split_by_unicode_script": False}, {"max_sentencepiece_length": 4},
    {"seed_sentencepiece_size": 3000}, {"user_defined_symbols": ("<sep>", "the")}, {"character_coverage": 0.98},
    {"normalization_rule_name": "identity"},
]


@pytest.mark.parametrize("flags", FLAG_CASES, ids=lambda f: ",".join(f))
def test_each_flag(con, flags):
    query = " UNION ALL ".join(f"SELECT text FROM read_json('{CORPORA / name}.jsonl')" for name in ("de", "ja"))
    _assert_same_candidates(con, query, UnigramSpec(**flags))


#: Words and what glues to them: E2-led characters (U+2014, U+2019, U+2026, U+20AC, U+2580 and U+2582
#: beside U+2581, U+2581 itself), digits, several scripts, a combining mark, several spaces.
TOKENS = ["the", "a", "ab", "abc", "bab", "x", "—", "’", "…", "€", "▀", "▂", "▁", "1", "2023", "٣", "１", "日本",
          "語", "Привет", "مرحبا", "ไทย", "한국", "e\u0301", ".", ",", "'", "-", "ab—", "—ab", "ab▂", "\u3000"]


@st.composite
def _corpora(draw) -> list[str]:
    tokens = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8)
    gaps = st.sampled_from(["", " ", " ", "  ", "\t"])
    pool = [draw(gaps) + "".join(t + draw(gaps) for t in draw(tokens)) for _ in range(draw(st.integers(1, 12)))]
    return ["the ab abc"] + draw(st.lists(st.sampled_from(pool), min_size=1, max_size=60))  # sentences repeat


def _docs(con, lines: list[str]) -> str:
    con.register("docs", pa.table({"text": ["\n".join(lines[i:i + 5]) for i in range(0, len(lines), 5)]}))
    return "SELECT text FROM docs"


@pytest.fixture(scope="module")
def shared_con():
    con = duckdb.connect()
    register(con)
    yield con
    con.close()


@settings(max_examples=150, deadline=None)
@given(_corpora(), st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.sampled_from([2, 4, 16]),
       st.sampled_from([3, 40, 1_000_000]), st.sampled_from([(), ("ab",)]), st.sampled_from([0.98, 0.9995]))
def test_hypothesis_text(shared_con, lines, dummy, extra, digits, number, max_length, seeds, symbols, coverage):
    spec = UnigramSpec(add_dummy_prefix=dummy, remove_extra_whitespaces=extra, split_digits=digits,
                       split_by_number=number, max_sentencepiece_length=max_length, seed_sentencepiece_size=seeds,
                       user_defined_symbols=symbols, character_coverage=coverage)
    _assert_same_candidates(shared_con, _docs(shared_con, lines), spec)


@settings(max_examples=100, deadline=None)
@given(_corpora(), st.booleans(), st.sampled_from([2, 4, 16]))
def test_boundary_candidates_are_their_definition(shared_con, lines, dummy, max_length):
    """Each text w of 2..max_length characters ending sentences whose next sentences in the trainer's
    order begin with different bytes (or one is the last), with the count of the sentences it ends."""
    spec = UnigramSpec(add_dummy_prefix=dummy, max_sentencepiece_length=max_length)
    with WorkTables(shared_con) as work:
        sentences = read_sentences(shared_con, _docs(shared_con, lines), spec, work)
        found = _boundary_candidates(shared_con, sentences, spec, work)
    text, counts, order = sentences.text.to_pylist(), sentences.counts.to_pylist(), sentences.order.tolist()
    follow: dict[int, set[int]] = {}
    for p, sid in enumerate(order):
        follow.setdefault(sid, set()).add(text[order[p + 1]].encode()[0] if p + 1 < len(order) else 256)
    expected = {}
    for k in range(2, max_length + 1):
        ends: dict[str, tuple[set[int], int]] = {}
        for sid, sentence in enumerate(text):
            if len(sentence) >= k:
                seen, n = ends.get(sentence[-k:], (set(), 0))
                ends[sentence[-k:]] = (seen | follow[sid], n + counts[sid])
        expected.update({w.encode(): n for w, (seen, n) in ends.items()
                         if len(seen) > 1 and "\x00" not in w and piece_is_valid(w, spec.flags())})
    assert found == expected
