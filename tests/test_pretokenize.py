"""The Cython pretokenizer equals the reference (tests/oracle_pretokenize.py: `regex.findall` per run).

tests/data/corpora_sample.jsonl holds the first 20 documents of every fixture corpus
(../shared/fixtures/corpora), each cut to at most 1,500 UTF-8 bytes at a space or newline; the full
corpora are checked too when ../shared is present.
"""
import json
from pathlib import Path

import pyarrow as pa
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle_pretokenize as oracle
from sqltok.pretokenizer._pretokenize import (CLASS_BITS, PATTERN_IDS, pretoken_counts_arrow, pretokenize,
                                              pretokenize_arrow, unicode_table)

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
SHARED_CORPORA = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "corpora"
MODES = [True, False]


def check(text: str) -> None:
    for aware in MODES:
        assert pretokenize(text, aware) == oracle.pretokenize(text, aware), (text, aware)


def read_texts(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


# --- fixed cases --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Hello world!", ["Hello", " world", "!"]),
    ("Hello мир 你好 world!", ["Hello", " мир", " 你", "好", " world", "!"]),
    ("Helloмир你好world!", ["Hello", "мир", "你", "好", "world", "!"]),
    ("café   мир", ["café", "  ", " мир"]),
    ("漢字カタカナ ABC", ["漢", "字", "カ", "タ", "カ", "ナ", " ABC"]),
    ("I'M HERE'S don'T we'LL", ["I'M", " HERE'S", " don'T", " we'LL"]),
    ("a\r\n\r\n  b  \n c   ", ["a", "\r\n\r\n", " ", " b", "  \n", " c", "   "]),
    ("x 123456", ["x", " ", "123", "456"]),
    ("ABCʰdef AB\u0301", ["ABCʰdef", " AB\u0301"]),
    ("a. \u0301б", ["a", ".", " \u0301", "б"]),  # Inherited keeps trailing Common in its run
    ("\u0301 б", ["\u0301", " б"]),  # leading Inherited and Common join the first real run
])
def test_examples(text, expected):
    assert pretokenize(text) == expected
    check(text)


@pytest.mark.parametrize("text", [
    "", " ", "\n", "\r\n", " \u0301", "\u0301", "\u0301abc", ". \u0301", "a. \u0301b", "\u0301 б",
    "ǅemal ǅ", "ABCʰ", " \u0301A", "$$$/\n\n", " ?!/\r", "'s", "x'ſ 'Ll 'RE 'vE", "K'ſ\u212a",
    "日本語のテキスト。", "ภาษาไทย ๑๒๓", "ပြည်", "ខ្មែរ", "ລາວ", "ー々〆", "a\u200db", "🙂👍🏽 ok",
    "١٢٣٤ ½ Ⅻ", "\u3000x\u00a0y\u2028z\u0085", "\U000e0001a", "\u0378\u0379", "αβγ\u0301 δ",
])
def test_edge_cases(text):
    check(text)


def test_contraction_case_folding():
    """(?i:...) folds exactly the ASCII letters of the contractions and U+017F onto them."""
    everything = "".join(map(chr, range(0x110000)))
    folding = {m.group() for m in regex.finditer(r"(?i)[strevmld]", everything)}
    assert folding == set("strevmldSTREVMLD\u017f")
    for c in folding | {"\u212a", "\u0130", "\u0131"}:
        for tail in ("", "e", "l", "E", "L"):
            check(f"word'{c}{tail} x")


# --- properties over arbitrary Unicode ----------------------------------------------------------

FRAGMENTS = [
    "a", "Z", "the", " The", "HTTP", "x", "'", "'s", "'S", "'ll", "'LL", "'Re", "'ve", "'d", "'M", "'t",
    "\u017f", "'\u017f", "\u212a", "ǅ", "ʰ", "ˆ", "ª", "\u0301", "\u0308", "\u064b", "\u20dd", "\u200c", "\u200d",
    "\ufe0f", "é", "ß", "Ω", "ω", "\u0386", "дом", "Д", "ب", "مرحبا", "\u0915\u094d\u0937", "ह",
    "\u0e01", "\u0e31", "ภา", "\u1000", "\u103a", "\u1780", "\u17d2", "\u0e81", "\u0eb2", "한",
    "漢", "字", "々", "〆", "あ", "ゝ", "カ", "ー", "ｶ", "ｰ", "0", "42", "٣", "½", "Ⅻ", "𝟘",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\x0b", "\x1c",
    ".", ",", "/", "?!", "--", "(", "@", "#", "…", "“", "«", "🙂", "👍🏽", "🇫🇷", "\u0378",
    "\U000e0001", "\U00010940", "\ue000", "\x00",
]
fragment_texts = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
any_texts = st.text(st.characters(codec="utf-8"), max_size=60)


@settings(max_examples=1500, deadline=None)
@given(fragment_texts)
def test_fragments_equal_oracle(text):
    check(text)


@settings(max_examples=1000, deadline=None)
@given(any_texts)
def test_any_unicode_equals_oracle(text):
    check(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(fragment_texts, any_texts), max_size=4).map("".join))
def test_mixtures_equal_oracle(text):
    check(text)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(st.text(st.characters(max_codepoint=0x7F), max_size=60),
                          st.text(st.sampled_from("az`{@[AZ' \n\u00e9\u00ff\u0100"), max_size=60),
                          fragment_texts), max_size=3).map("".join))
def test_ascii_scan_equals_oracle(text):
    """The matcher's ASCII-only word scan (a-z runs 8 bytes at a time: the neighbours of a-z in
    ASCII and non-ASCII letters stop them at any offset), and its hand-over to the general path where
    a byte that decides the match is not ASCII."""
    check(text)


WINDOW_CHARS = "abstlrvemdSTLREVMDXY' \t\n\r\x0b/.(-1234567890\x00\x7f"


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.one_of(st.text(st.sampled_from(WINDOW_CHARS), min_size=50, max_size=200),
                          st.text(st.sampled_from("a'sl \n\r/."), max_size=80),
                          st.sampled_from(["\u00e9", "\u017f", "\u0301", "\u00a0", "\u0085", "\u65e5"])),
                max_size=4).map("".join))
def test_ascii_windows_equal_oracle(text):
    """The main pattern's 64-byte ASCII windows (o200k_ascii.h): contractions, the CR/LF/'/' tail of
    a punctuation run, whitespace runs around CR/LF, digit groups, and the hand-over at non-ASCII."""
    check(text)


@pytest.mark.parametrize("pad", range(44, 76))
def test_ascii_window_edges(pad):
    """Every rule's pattern placed across the end of a window (starts are decided up to byte 56 of
    64, then the next window begins at the last start)."""
    lead = ("ab " * 30)[:pad]
    for tail in ["'s x", "'LL", "it'sa", "  \n  x", "\n \n x", "1234567", ".\n/\r.x", " \t \n", "aB c",
                 "  (x", " (\n/\n/x", "x'\u017f", " \u00e9t\u00e9", "\t\t", "  ", "1 2"]:
        check(lead + tail)
        check(lead.replace(" ", "\n") + tail)


@pytest.mark.parametrize("text", ["\r   \xa0\r", "\n   \xa0\n", "\r\r   \xa0\r", "\r \t \xa0\r", "\r   \u3000\r",
                                  "\r     \u2003x", "x\n      \xa0"])
def test_whitespace_after_a_line_break_into_unicode_whitespace(text):
    """The first whitespace after a CR/LF starts a pretoken only if its run holds no CR/LF: a run that
    goes on in non-ASCII whitespace (U+00A0, U+3000) is decided past the ASCII window (hypothesis
    found "\r   \xa0\r", cut after the CR)."""
    check(text)


# --- corpora ------------------------------------------------------------------------------------

def test_corpora_sample():
    texts = read_texts(SAMPLE)
    assert len(texts) >= 200
    for text in texts:
        check(text)


@pytest.mark.skipif(not SHARED_CORPORA.is_dir(), reason="../shared/fixtures/corpora not present")
@pytest.mark.parametrize("lang", ["en", "code", "zh", "ja", "ko", "th", "hi", "ru", "el", "ar", "de",
                                  "fr", "es"])
def test_full_corpus(lang):
    for text in read_texts(SHARED_CORPORA / f"{lang}.jsonl"):
        check(text)


# --- linear time --------------------------------------------------------------------------------

@pytest.mark.parametrize("unit", ["a", "A", " ", "'", "'s", "\n ", "1", "\u0301", " \u0301", "ʰ",
                                  "Aʰ", "漢", "a\u0301", ". ", "-A", "aб"])
def test_pathological_inputs(unit):
    big = unit * (1_000_000 // len(unit))
    for aware in MODES:
        assert "".join(pretokenize(big, aware)) == big
    check(unit * (50_000 // len(unit)))


# --- Arrow batches ------------------------------------------------------------------------------

ROWS = ["Hello world!", None, "", "漢字カタカナ ABC", "I'M here\r\n", None, "ภาษา ไทย", "x"]


BATCH_KINDS = [
    lambda rows: pa.array(rows, pa.string()),
    lambda rows: pa.array(rows, pa.large_string()),
    lambda rows: pa.array(rows, pa.string_view()),
    lambda rows: pa.array(["pad", None] + rows + ["tail"], pa.string()).slice(2, len(rows)),
    lambda rows: pa.chunked_array([pa.array(rows[:3], pa.string()), pa.array(rows[3:], pa.string())]),
]


@pytest.mark.parametrize("make", BATCH_KINDS)
@pytest.mark.parametrize("aware", MODES)
def test_pretokenize_arrow(make, aware):
    out = pretokenize_arrow(make(ROWS), aware)
    out.validate(full=True)
    assert out.type == pa.list_(pa.string())
    assert out.to_pylist() == [None if t is None else oracle.pretokenize(t, aware) for t in ROWS]


def test_pretokenize_arrow_without_nulls_and_empty():
    out = pretokenize_arrow(pa.array([t for t in ROWS if t is not None]))
    assert out.null_count == 0 and out.to_pylist()[1] == []
    assert pretokenize_arrow(pa.array([], pa.string())).to_pylist() == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), fragment_texts, any_texts,
                          st.text(st.sampled_from(WINDOW_CHARS), min_size=50, max_size=300)), max_size=6))
def test_pretoken_counts_equal_the_oracles(rows):
    """The count-only kernel (ASCII windows counted whole) gives `len(regex.findall(...))` per row,
    in both modes, and the list lengths of `pretokenize_arrow` under every other pattern."""
    for aware in MODES:
        assert pretoken_counts_arrow(pa.array(rows, pa.large_string()), aware).to_pylist() == [
            None if t is None else len(oracle.pretokenize(t, aware)) for t in rows]
    for pid in PATTERN_IDS.values():
        arr = pa.array(rows, pa.string())
        assert pretoken_counts_arrow(arr, pattern=pid).to_pylist() == \
            pretokenize_arrow(arr, pattern=pid).value_lengths().to_pylist()


@pytest.mark.parametrize("make", BATCH_KINDS)
def test_pretoken_counts_of_every_batch_kind(make):
    out = pretoken_counts_arrow(make(ROWS), False)
    out.validate(full=True)
    assert out.type == pa.int64()
    assert out.to_pylist() == [None if t is None else len(oracle.pretokenize(t, False)) for t in ROWS]


# --- character tables ---------------------------------------------------------------------------

def regex_knows_unicode_17() -> bool:
    try:
        return regex.match(r"\p{sc=Sidetic}", "\U00010940") is not None
    except regex.error:
        return False


@pytest.mark.skipif(not regex_knows_unicode_17(), reason="regex predates Unicode 17")
def test_tables_equal_regex():
    entries, _ = unicode_table()
    everything = "".join(map(chr, range(0x110000)))
    for name, bit in CLASS_BITS.items():
        prop = r"\s" if name == "s" else rf"\p{{{name}}}"
        expected = [m.start() for m in regex.finditer(prop, everything)]
        assert [cp for cp, e in enumerate(entries) if e & bit] == expected, name


def test_scripts_equal_scripts_txt():
    entries, names = unicode_table()
    assert [names[e >> 8] for e in entries] == oracle.script_table()
