"""detect_language / language_of against py3langid itself, accuracy on the labelled sample, and
script_shares against unicodedata2-free oracles (the `regex` module's Script property)."""
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import py3langid.langid as langid
import pytest
import regex
from hypothesis import example, given, settings, strategies as st

from sqltok.corpus.language import DEFAULT_MIN_CONFIDENCE, MACROLANGUAGE, detect_language, language_arrays
from sqltok.corpus.scripts import script_shares_array

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
DOCS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def oracle():
    return langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)


def _expected(oracle, text):
    code, conf = oracle.classify(text)
    code = MACROLANGUAGE.get(code, code if len(code) == 2 else None)
    return code if conf >= DEFAULT_MIN_CONFIDENCE else None, conf


def test_same_as_py3langid_on_the_sample(oracle):
    texts = [d["text"] for d in DOCS]
    codes, conf = language_arrays(pa.array(texts), threads=2)
    for text, code, c in zip(texts, codes.to_pylist(), conf.to_pylist()):
        want, want_conf = _expected(oracle, text)
        assert code == want
        assert c == pytest.approx(want_conf, abs=2e-3)  # float32 sums in another order


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80))
@example("Aº")  # upper for Arrow, not for Python: º is an Other_Lowercase letter
@example("HELLO WORLD, THIS IS ENGLISH")
def test_same_as_py3langid_on_any_text(oracle, text):
    want, want_conf = _expected(oracle, text)
    codes, conf = language_arrays(pa.array([text]))
    if conf[0].as_py() is None:  # no n-gram of the model in the text: undecided
        assert codes[0].as_py() is None
    else:
        assert codes[0].as_py() == want
        assert conf[0].as_py() == pytest.approx(want_conf, abs=2e-3)


def test_accuracy_per_language_on_the_labelled_sample():
    """Natural languages of the sample (code is not one); the sample's Debian handbook pages mix in
    English, hence not 1.0 everywhere."""
    docs = [d for d in DOCS if d["lang"] != "code"]
    codes = language_arrays(pa.array([d["text"] for d in docs]))[0].to_pylist()
    right, total = Counter(), Counter()
    for d, code in zip(docs, codes):
        total[d["lang"]] += 1
        right[d["lang"]] += code == d["lang"]
    accuracy = {lang: right[lang] / total[lang] for lang in total}
    assert min(accuracy.values()) >= 0.85, accuracy
    assert sum(right.values()) / sum(total.values()) >= 0.95


def test_sql_names_and_nulls(con):
    rows = con.execute("SELECT detect_language(t), language_of(t) FROM (VALUES ('Das ist ein ganz "
                       "gewöhnlicher deutscher Satz über das Wetter.'), (NULL), (''), ('12345 !!!')) v(t)").fetchall()
    assert rows[0][0] == "de" and rows[0][1]["lang"] == "de" and rows[0][1]["confidence"] > 0.9
    assert rows[1] == (None, None)
    assert [r[0] for r in rows[2:]] == [None, None]
    assert detect_language("Это обычное русское предложение о погоде.") == "ru"


def _script_oracle(text):
    names = Counter()
    for ch in text:
        for name in ("Common", "Inherited"):
            if regex.fullmatch(rf"\p{{Script={name}}}", ch):
                names[name] += 1
                break
        else:
            m = [s for s in SCRIPTS if regex.fullmatch(rf"\p{{Script={s}}}", ch)]
            names[m[0] if m else "Unknown"] += 1
    return {k: v / len(text) for k, v in names.items()}


SCRIPTS = ["Latin", "Han", "Hiragana", "Katakana", "Hangul", "Cyrillic", "Greek", "Arabic", "Devanagari",
           "Thai", "Hebrew"]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZé1 ,.\u0301日本ひカ한Жλعहกש😀\u200b"), max_size=40))
def test_script_shares_match_the_regex_module(text):
    got = script_shares_array(pa.array([text]))[0].as_py()
    assert {x["script"]: pytest.approx(x["share"]) for x in got} == _script_oracle(text)
    assert [x["share"] for x in got] == sorted((x["share"] for x in got), reverse=True)


def test_script_shares_nulls_and_sql(con):
    assert script_shares_array(pa.array([None, ""])).to_pylist() == [None, []]
    assert con.execute("SELECT script_shares('ab日')").fetchone()[0] == [
        {"script": "Latin", "share": pytest.approx(2 / 3)}, {"script": "Han", "share": pytest.approx(1 / 3)}]
