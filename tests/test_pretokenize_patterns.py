"""The matchers of other tokenizers' pre-tokenization patterns (`pattern=` ids) equal their oracles.

Oracle of a pattern string: `regex.findall` of it, with `$` written `\\Z` (tiktoken's fancy-regex reads
`$` as the end of the text; Python's `$` also matches before a final newline). PAT_O200K and
PAT_SCRIPT_AWARE keep the oracle of tests/oracle_pretokenize.py. Where the packages and fixtures are
present, the pieces are also checked against tiktoken itself and against Hugging Face `tokenizers`.
"""
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import regex
import unicodedata2
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import oracle_pretokenize as oracle
from sqltok.pretokenizer import patterns
from sqltok.pretokenizer._pretokenize import (PATTERN_IDS, PATTERNS, pattern_id, pretokenize,
                                 pretokenize_arrow)

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "tokenizers"

O200K = patterns.O200K
CL100K = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_TIKTOKEN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
# mistral-common's tekken_240718.json and tekken_240911.json, config.pattern
TEKKEN = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"""
          r"""[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

# Every pattern string with its id, written out here independently of the module.
EXPECTED_PATTERNS = {O200K: 0, CL100K: 2, LLAMA3: 3, QWEN2: 4, GPT2: 5, GPT2_TIKTOKEN: 5, TEKKEN: 6}
NEW_PATTERNS = [CL100K, LLAMA3, QWEN2, GPT2, GPT2_TIKTOKEN, TEKKEN]
NAMES = {O200K: "o200k", CL100K: "cl100k", LLAMA3: "llama3", QWEN2: "qwen2", GPT2: "gpt2",
         GPT2_TIKTOKEN: "gpt2-tiktoken", TEKKEN: "tekken"}
COMPILED = {pat: regex.compile(pat.replace("$", r"\Z")) for pat in EXPECTED_PATTERNS}


def expected(text: str, pat: str) -> list[str]:
    return COMPILED[pat].findall(text)


def check(text: str, pat: str) -> None:
    assert pretokenize(text, pattern=EXPECTED_PATTERNS[pat]) == expected(text, pat), (text, NAMES[pat])


def check_all(text: str) -> None:
    for pat in EXPECTED_PATTERNS:
        check(text, pat)


def read_texts(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


# --- pattern ids ----------------------------------------------------------------------------------

def test_pattern_ids():
    assert PATTERN_IDS == {"o200k": 0, "script_aware": 1, "cl100k": 2, "llama3": 3, "qwen2": 4,
                           "gpt2": 5, "tekken": 6}
    assert PATTERNS == EXPECTED_PATTERNS
    for pat, pid in EXPECTED_PATTERNS.items():
        assert pattern_id(pat) == pid
    for unknown in ["", "x", r"\s+", CL100K.replace(r"\s++$|", ""), LLAMA3 + "|x", GPT2.upper(),
                    QWEN2.replace(r"\p{N}|", r"\p{N}{1,2}|"), TEKKEN.replace(r"\p{N}|", r"\p{N}{1,3}|")]:
        assert pattern_id(unknown) is None


def test_tiktoken_pattern_strings():
    """The strings tiktoken's encodings declare (read without fetching any vocabulary)."""
    op = pytest.importorskip("tiktoken_ext.openai_public")
    mp = pytest.MonkeyPatch()
    with mp.context() as m:
        m.setattr(op, "load_tiktoken_bpe", lambda *a, **k: {})
        m.setattr(op, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
        found = {name: op.ENCODING_CONSTRUCTORS[name]()["pat_str"] for name in
                 ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]}
    ids = {"gpt2": 5, "r50k_base": 5, "p50k_base": 5, "p50k_edit": 5, "cl100k_base": 2,
           "o200k_base": 0}
    assert {name: pattern_id(pat) for name, pat in found.items()} == ids


@pytest.mark.parametrize("name, pid", [("llama3", 3), ("qwen3", 4), ("cl100k_base", 3),
                                       ("o200k_base", 0)])
def test_tokenizer_json_pattern_strings(name, pid):
    path = TOKENIZERS / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    pre = json.loads(path.read_text(encoding="utf-8"))["pre_tokenizer"]
    splits = [p for p in pre["pretokenizers"] if p["type"] == "Split"]
    assert len(splits) == 1 and pattern_id(splits[0]["pattern"]["Regex"]) == pid


# --- semantics worked out by hand -----------------------------------------------------------------

@pytest.mark.parametrize("pat, text, pieces", [
    # $ is the end of the text: trailing whitespace stays whole in cl100k only
    (CL100K, "a\n  ", ["a", "\n  "]),
    (LLAMA3, "a\n  ", ["a", "\n", "  "]),
    (QWEN2, "a\n  ", ["a", "\n", "  "]),
    (CL100K, "a \n", ["a", " \n"]),
    (CL100K, "a  \n b", ["a", "  \n", " b"]),
    (LLAMA3, "a \n\n  b", ["a", " \n\n", " ", " b"]),
    # contractions before the prefixed word, in any case, with LONG S; not KELVIN SIGN
    (CL100K, "'sa 'LL 'Ve 'ſ 'K", ["'s", "a", " '", "LL", " '", "Ve", " '", "ſ", " '", "K"]),
    (LLAMA3, "he'SS'ſx", ["he", "'S", "S", "'ſ", "x"]),
    (QWEN2, "x'\u212a", ["x", "'\u212a"]),
    (GPT2, "I'M he's we'll 'ſ", ["I", "'", "M", " he", "'s", " we", "'ll", " '", "ſ"]),
    # any non-CR/LF, non-letter, non-digit character prefixes a word
    (CL100K, "\tHello\u00a0w.x .y\rZ", ["\tHello", "\u00a0w", ".x", " .", "y", "\r", "Z"]),
    (GPT2, "\tHello .x", ["\t", "Hello", " .", "x"]),
    # digits
    (CL100K, "x 1234567", ["x", " ", "123", "456", "7"]),
    (QWEN2, "x 123", ["x", " ", "1", "2", "3"]),
    (GPT2, "x 1234567", ["x", " 1234567"]),
    # punctuation: a space prefix and a CR/LF tail (no "/" unlike o200k)
    (LLAMA3, "a ?!\r\n\nb", ["a", " ?!\r\n\n", "b"]),
    (LLAMA3, "a //\n", ["a", " //\n"]),
    (GPT2, "a ?!\n", ["a", " ?!", "\n"]),
    # whitespace before a word
    (GPT2, "a   b \t\nc", ["a", "  ", " b", " \t", "\n", "c"]),
    (CL100K, "a   b", ["a", "  ", " b"]),
])
def test_examples(pat, text, pieces):
    """The split of each pattern, as worked out in pretokenize.pxd."""
    assert pretokenize(text, pattern=EXPECTED_PATTERNS[pat]) == pieces
    assert expected(text, pat) == pieces


@pytest.mark.parametrize("text", ["a\n", "a \n", "a\n\n", "a\nb\n", "a  \n", " \n", "a\t\r\n"])
def test_cl100k_dollar(text):
    """Possessive \\s++ only stops at a non-space, never at the final newline where Python's $ would
    also match, so $ and \\Z split the same (checked against tiktoken itself below)."""
    assert regex.findall(CL100K, text) == expected(text, CL100K)
    assert regex.findall(GPT2_TIKTOKEN, text) == expected(text, GPT2_TIKTOKEN)
    check(text, CL100K)


@pytest.mark.parametrize("text", [
    "", " ", "\n", "\r\n", "'", "''", "'''s", "'s", "'S", "'ſ", "'l", "'ll", "'lL", "'r", "'re", "'vE",
    "x'", "x' ", " '", " 's", "\n's", "a\n", "a\n ", "a \n ", " \n", "\r", "\r\r\n\n", " \r \n ",
    "\u0301", " \u0301", "a\u0301", "\u0301a", "1\u0301", "½3", "٣٤٥٦", "Ⅻ1", "\x85x", "\u2028 x",
    "\u3000\u3000x", "\x0b\x0c", "\x1c\x1d x", "🙂🙂 🙂", " 🙂x", "\u00a0\u00a0", "a\u200db", "ǅ ʰ ª",
])
def test_edge_cases(text):
    check_all(text)


# --- properties over arbitrary Unicode ------------------------------------------------------------

FRAGMENTS = [
    # letters of every kind, marks
    "a", "Z", "s", "S", "t", "re", "RE", "ll", "Ll", "ve", "d", "M", "the", " The", "HTTP", "é", "ß",
    "Ω", "дом", "Д", "مرحبا", "漢字", "カ", "ǅ", "ʰ", "ª", "\u017f", "\u212a", "\u0130", "\u0131",
    "\u0301", "\u0308", "\u064b", "\u0915\u094d\u0937", "\u0e31", "\u20dd", "\u200d", "\ufe0f",
    # contractions
    "'", "''", "'s", "'S", "'t", "'T", "'m", "'M", "'d", "'D", "'re", "'Re", "'rE", "'ve", "'VE", "'ll",
    "'lL", "'\u017f", "'\u212a", "'r", "'v", "'l", "’s",
    # digits
    "0", "1", "42", "123", "2024", "٣", "٤٥", "½", "Ⅻ", "𝟘", "²",
    # whitespace mixes
    " ", "  ", "   ", "\t", " \t", "\n", "\r", "\r\n", "\n\n", " \n", "\n ", " \r\n ", "\x0b", "\x0c",
    "\x85", "\u00a0", "\u2028", "\u2029", "\u3000", "\u200b", "\x1c",
    # punctuation and symbols
    ".", ",", "/", "//", "?!", "--", "(", ")", "@", "#", "$", "…", "“", "«", "🙂", "👍🏽", "+", "\x00",
    "[", "]", "{", "}", "_", "`", "^", "~",
]
fragment_texts = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
any_texts = st.text(st.characters(codec="utf-8"), max_size=40)
mixed_texts = st.lists(st.one_of(fragment_texts, any_texts), max_size=4).map("".join)


@pytest.mark.parametrize("pat", NEW_PATTERNS, ids=[NAMES[p] for p in NEW_PATTERNS])
@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=fragment_texts)
def test_fragments_equal_oracle(pat, text):
    check(text, pat)


@pytest.mark.parametrize("pat", NEW_PATTERNS, ids=[NAMES[p] for p in NEW_PATTERNS])
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=any_texts)
def test_any_unicode_equals_oracle(pat, text):
    check(text, pat)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_texts)
@example("x\n  ")
def test_mixtures_equal_oracle(text):
    check_all(text)


# --- the 64-byte ASCII windows of cl100k, Llama 3, Qwen 2 (cl100k_ascii.h), GPT-2 (gpt2_ascii.h), Tekken --

WINDOW_PATTERNS = [CL100K, LLAMA3, QWEN2, GPT2, GPT2_TIKTOKEN, TEKKEN]

WINDOW_CHARS = "abstlrvemdSTLREVMDXY' \t\n\r\x0b\x0c/.(-1234567890\x00\x1c\x7f"


@pytest.mark.parametrize("pat", WINDOW_PATTERNS, ids=[NAMES[p] for p in WINDOW_PATTERNS])
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.text(st.sampled_from(WINDOW_CHARS), min_size=50, max_size=200),
                          st.text(st.sampled_from("a's \t\n\r."), max_size=80),
                          st.sampled_from(["\u00e9", "\u017f", "\u0301", "\u00a0", "\u0085", "\u65e5"])),
                max_size=4).map("".join))
def test_ascii_windows_equal_oracle(pat, text):
    """The windows: contractions only where the apostrophe starts a pretoken, a P run's CR/LF tail,
    whitespace runs around CR/LF and at the end of the text (cl100k's \\s++$), digit groups (one
    digit each in Qwen 2 and Tekken), GPT-2's lowercase contractions, spaces joining the next run and
    whole digit runs, Tekken's apostrophes as prefixes (o200k_ascii.h without contractions), and the
    hand-over at non-ASCII bytes."""
    check(text, pat)


@pytest.mark.parametrize("pat", WINDOW_PATTERNS, ids=[NAMES[p] for p in WINDOW_PATTERNS])
@pytest.mark.parametrize("pad", range(44, 76))
def test_ascii_window_edges(pad, pat):
    """Every rule placed across the end of a window (starts are decided up to byte 56 of 64, then
    the next window begins at the last start), and runs that end the text there."""
    lead = ("ab " * 30)[:pad]
    for tail in ["'s x", "'LL", "it'sa", " 's", "!'s", "\t's", "  \n  x", "\n \n x", "1234567", ".\n\r.x",
                 " \t \n", "aB c", "  (x", " (\n\n x", "x'\u017f", " \u00e9t\u00e9", "\t\t", "  ", "1 2",
                 "a\n  ", "x\u00a0 y", "  \u00a0\n", "a \n\n  ", "x\n \t",
                 # GPT-2 (gpt2_ascii.h): lowercase contractions where a pretoken starts, the space that
                 # joins the next run, whole digit runs, the last whitespace before a non-space
                 "x's", "x'S x", "x'Re x", "  's", "?!'ll", "''ve", "'s'd x", "a  b", "\t b", " \tb", "  ?!", " 123 4",
                 "a \n b", "\n\nx", " \u00e9", "\t\u00e9", "  \u00a0x"]:
        check(lead + tail, pat)
        check(lead.replace(" ", "\n") + tail, pat)
        check(lead.replace(" ", "!") + tail, pat)


# --- corpora --------------------------------------------------------------------------------------

def test_corpora_sample():
    texts = read_texts(SAMPLE)
    assert len(texts) >= 200
    for text in texts:
        check_all(text)
    big = "\n\n".join(texts)  # one long text too
    for pat in EXPECTED_PATTERNS:
        check(big, pat)


# --- pathological runs (their speed is measured in bench/, not asserted here) --------------------

@pytest.mark.parametrize("unit", ["a", "A", "1", " ", "'", "'s", "'S", "'ll", "\n", "\r\n", " \n",
                                  "\n ", "  x", " .", ".", "\t", "\u00a0", "\u0301", "a1", "'x", "x ",
                                  " 1", "\u017f", "'\u017f", "-a", "🙂"])
def test_pathological_inputs(unit):
    big = unit * (1_000_000 // len(unit))
    for pid in range(len(PATTERN_IDS)):
        assert "".join(pretokenize(big, pattern=pid)) == big
    medium = unit * (20_000 // len(unit))
    for text in (medium, medium + "x", "x" + medium + "\n"):
        check_all(text)


# --- the Python and Arrow functions ---------------------------------------------------------------

ROWS = ["Hello world's\n  ", None, "", "I'M here\r\n\r\n  x", None, "x 12345 ſ'S", "\tTab  \n"]
BATCH_KINDS = [
    lambda rows: pa.array(rows, pa.string()),
    lambda rows: pa.array(rows, pa.large_string()),
    lambda rows: pa.array(rows, pa.string_view()),
    lambda rows: pa.array(["pad", None] + rows + ["tail"], pa.string()).slice(2, len(rows)),
    lambda rows: pa.chunked_array([pa.array(rows[:3], pa.string()), pa.array(rows[3:], pa.string())]),
]


def expected_rows(rows, pat):
    return [None if t is None else expected(t, pat) for t in rows]


def test_pattern_keyword_of_pretokenize():
    text = "Hello world's 漢字カタカナ\n  "
    assert pretokenize(text, pattern=1) == pretokenize(text) == oracle.pretokenize(text, True)
    assert pretokenize(text, pattern=0) == pretokenize(text, False) == oracle.pretokenize(text, False)
    for pat, pid in EXPECTED_PATTERNS.items():
        for aware in (True, False):  # pattern= overrides script_aware
            assert pretokenize(text, aware, pattern=pid) == expected(text, pat)
    assert pretokenize(text, pattern=np.int64(4)) == expected(text, QWEN2)  # any integer type
    for bad in (-1, 7, 1 << 40, "cl100k", 2.0, True, "2"):
        with pytest.raises(ValueError):
            pretokenize(text, pattern=bad)
        with pytest.raises(ValueError):
            pretokenize_arrow(pa.array([text]), pattern=bad)


@pytest.mark.parametrize("make", BATCH_KINDS)
@pytest.mark.parametrize("pat", NEW_PATTERNS, ids=[NAMES[p] for p in NEW_PATTERNS])
def test_pretokenize_arrow(make, pat):
    for aware in (True, False):
        out = pretokenize_arrow(make(ROWS), aware, pattern=EXPECTED_PATTERNS[pat])
        out.validate(full=True)
        assert out.type == pa.list_(pa.string())
        assert out.to_pylist() == expected_rows(ROWS, pat)


# --- the tokenizers users have: tiktoken (fancy-regex) and Hugging Face (Oniguruma) ---------------

def tiktoken_pieces(pat: str, text: str) -> list[str]:
    """tiktoken's own split of `text`: with every substring of the text in the vocabulary (shorter
    ones first), byte-pair merging makes each piece one token."""
    import tiktoken
    data = text.encode()
    ranks = {bytes([b]): b for b in range(256)}
    for size in range(2, len(data) + 1):
        for i in range(len(data) - size + 1):
            ranks.setdefault(data[i:i + size], len(ranks))
    enc = tiktoken.Encoding("probe", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    return [enc.decode_single_token_bytes(t).decode() for t in enc.encode_ordinary(text)]


TIKTOKEN_PATTERNS = [CL100K, GPT2_TIKTOKEN, GPT2, O200K, TEKKEN]


@pytest.mark.parametrize("pat", TIKTOKEN_PATTERNS, ids=[NAMES[p] for p in TIKTOKEN_PATTERNS])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(FRAGMENTS), max_size=10).map("".join).filter(
    lambda t: len(t.encode()) <= 32))
@example(text="a\n  ")
@example(text="x \n\n")
def test_tiktoken_pieces(pat, text):
    pytest.importorskip("tiktoken")
    assert pretokenize(text, pattern=EXPECTED_PATTERNS[pat]) == tiktoken_pieces(pat, text)


def byte_level_decoder():
    """Inverse of the GPT-2 bytes-to-unicode map of the ByteLevel pre-tokenizer."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = printable + [256 + i for i in range(256 - len(printable))]
    raw = printable + [b for b in range(256) if b not in printable]
    return {chr(c): b for c, b in zip(chars, raw)}


def assigned_before_unicode_15(text: str) -> bool:
    """Oniguruma in `tokenizers` has older Unicode tables: keep characters whose class is stable."""
    import unicodedata  # Unicode 14 on Python 3.11
    return all(unicodedata.category(c) == unicodedata2.category(c) != "Cn" for c in text)


@pytest.fixture(scope="module")
def hf_pre_tokenizers():
    tokenizers = pytest.importorskip("tokenizers")
    out = {GPT2: tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)}
    for name, pat in [("llama3", LLAMA3), ("qwen3", QWEN2)]:
        path = TOKENIZERS / name / "tokenizer.json"
        if path.is_file():
            out[pat] = tokenizers.Tokenizer.from_file(str(path)).pre_tokenizer
    return out


def hf_pieces(pre_tokenizer, text: str) -> list[str]:
    decode = byte_level_decoder()
    return [bytes(decode[c] for c in piece).decode() for piece, _ in pre_tokenizer.pre_tokenize_str(text)]


def test_hf_corpora_sample(hf_pre_tokenizers):
    texts = [t for t in read_texts(SAMPLE) if assigned_before_unicode_15(t)]
    for pat, pre_tokenizer in hf_pre_tokenizers.items():
        for text in texts:
            assert pretokenize(text, pattern=EXPECTED_PATTERNS[pat]) == hf_pieces(pre_tokenizer, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_texts.filter(assigned_before_unicode_15))
def test_hf_pieces(hf_pre_tokenizers, text):
    for pat, pre_tokenizer in hf_pre_tokenizers.items():
        assert pretokenize(text, pattern=EXPECTED_PATTERNS[pat]) == hf_pieces(pre_tokenizer, text)
