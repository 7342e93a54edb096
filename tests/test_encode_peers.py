"""Ids identical to tiktoken for `.tiktoken` files and to HF `tokenizers` for tokenizer.json files."""
from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqltok.bpe.tiktoken_file import read_tiktoken
from sqltok import BPETokenizer

from conftest import SHARED_TOKENIZERS, tiktoken_pair

tiktoken = pytest.importorskip("tiktoken")
import tiktoken.load  # noqa: E402

TIKTOKEN_FILES = ["r50k_base.tiktoken", "cl100k_base.tiktoken", "o200k_base.tiktoken",
                  "whisper_multilingual.tiktoken"]
HF_FILES = ["cl100k_base", "o200k_base", "llama3", "qwen3"]
CORPUS = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def corpus_texts() -> list[str]:
    return [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()]


EDGE_TEXTS = [
    "", " ", "  ", "\n", "\r\n\r\n", "hello world", "Hello  World!!", "it's 'S 'LL 'ſ don't",
    "<|endoftext|>", "a<|endoftext|>b<|endoftext", "<|fim_prefix|>x<|fim_suffix|>",
    "a" * 5000, "ab" * 3000, "9" * 1000, "\t\t  \n  x", "日本語のテキスト", "Ünïcödé ﬁ Å", "🙂👍🏽" * 10,
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 200,
]


@pytest.fixture(scope="module", params=TIKTOKEN_FILES)
def pair(request, bundled):
    """(sqltok Tokenizer, tiktoken Encoding) for one bundled `.tiktoken` file."""
    return tiktoken_pair(bundled(request.param))


def test_corpus_and_edge_cases_equal_tiktoken(pair):
    tok, ref = pair
    texts = corpus_texts() + EDGE_TEXTS
    assert tok.encode_ordinary_batch(texts) == [ref.encode_ordinary(t) for t in texts]
    assert tok.encode_batch(texts, allowed_special="all") == [ref.encode(t, allowed_special="all") for t in texts]
    assert [tok.token_count(t) for t in EDGE_TEXTS] == [len(ref.encode_ordinary(t)) for t in EDGE_TEXTS]


def test_special_token_policy_equals_tiktoken(pair):
    tok, ref = pair
    text = "x <|endoftext|> y"
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)
    with pytest.raises(ValueError):
        ref.encode(text)
    assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    assert tok.encode(text, allowed_special={"<|endoftext|>"}) == ref.encode(text, allowed_special={"<|endoftext|>"})
    ids = ref.encode(text, allowed_special="all")
    assert tok.decode(ids) == ref.decode(ids) == text
    assert tok.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)


def assigned(c: str) -> bool:
    """Characters the peers' Unicode tables know as we do: assigned in Python's Unicode version."""
    return unicodedata.category(c) not in ("Cn", "Cs")


FRAGMENTS = st.sampled_from(["'s", "'T", "'ll", "'RE", " ", "  ", "\n", "\r\n", "\t", "123", "4567", "!!",
                             "<|endoftext|>", "é", "e\u0301", "ſ", "K", "日本", "ไทย", "Привет", "🙂", "a", "Z"])
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(st.characters().filter(assigned), max_size=8)), max_size=30).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_any_text_equals_tiktoken(pair, text):
    tok, ref = pair
    ids = tok.encode_ordinary(text)
    assert ids == ref.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")


def test_long_runs_equal_tiktoken(bundled):
    path = bundled("o200k_base.tiktoken")
    spec = read_tiktoken(path)
    ref = tiktoken.Encoding(spec.name, pat_str=spec.pattern,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)), special_tokens={})
    tok = BPETokenizer.load(path)
    import base64
    import random

    blob = base64.b64encode(random.Random(0).randbytes(75_000)).decode()  # 100 KB, no spaces
    for text in (blob, "a" * 100_000, "\u00e9" * 20_000):
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    million = "a" * 1_000_000
    assert tok.decode(tok.encode_ordinary(million)) == million


def hf_available(name: str) -> bool:
    return (SHARED_TOKENIZERS / name / "tokenizer.json").exists()


@pytest.mark.parametrize("name", HF_FILES)
def test_tokenizer_json_equals_hf(name):
    tokenizers = pytest.importorskip("tokenizers")
    if not hf_available(name):
        pytest.skip("../shared/fixtures/tokenizers not present")
    path = SHARED_TOKENIZERS / name / "tokenizer.json"
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = BPETokenizer.load(path)
    texts = corpus_texts() + EDGE_TEXTS
    expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, allowed_special="all") == expected
    assert all(tok.decode(ids) == t for ids, t in zip(expected, texts) if name != "qwen3")  # Qwen normalizes NFC


def test_gpt2_vocab_and_merges_through_hf(bundled, tmp_path):
    """GPT-2's own vocab.json + merges.txt, as HF builds it, saved and loaded as tokenizer.json."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    hf = tokenizers.Tokenizer(models.BPE.from_file(str(bundled("gpt2_vocab.json")), str(bundled("gpt2_merges.txt"))))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = BPETokenizer.load(tmp_path / "tokenizer.json")
    texts = corpus_texts() + EDGE_TEXTS
    assert tok.encode_ordinary_batch(texts) == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.text(st.sampled_from("qxzjkvwy"), min_size=3, max_size=12), min_size=1, max_size=12),
       picks=st.lists(st.integers(0, 11), min_size=1, max_size=400))
def test_repeated_rare_words_equal_tiktoken(pair, words, picks):
    """Pretokens that need merging wait in one batch per text, and a repeat before the batch reuses
    the waiting one through its cache slot; texts of a few KB get small caches, so slots are shared
    and overwritten while pretokens wait. Whole-text and row-batch results both equal tiktoken's."""
    tok, ref = pair
    text = "".join(" " + words[i % len(words)] for i in picks)
    expected = ref.encode_ordinary(text)
    assert tok.encode_ordinary(text) == expected
    assert tok.encode_ordinary_batch([text, text[::-1], text]) == [expected, ref.encode_ordinary(text[::-1]), expected]


def test_long_pretoken_cache_equals_tiktoken(bundled):
    """Pretokens over 24 bytes are cached apart (hash, key arena); 60,000 distinct ones overflow it, so
    it starts over while a call runs. Every call, cold or warm, equals tiktoken."""
    import random

    path = bundled("o200k_base.tiktoken")
    spec = read_tiktoken(path)
    ref = tiktoken.Encoding(spec.name, pat_str=spec.pattern,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)), special_tokens={})
    tok = BPETokenizer.load(path)
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(25, 40)))
             for _ in range(60_000)]
    texts = [" ".join(words[i:i + 500]) + " " + " ".join(words[:50]) for i in range(0, len(words), 500)]
    thai = ["\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e40\u0e1b\u0e47\u0e19\u0e20\u0e32\u0e29\u0e32" * 3] * 20
    expected = ref.encode_ordinary_batch(texts + thai)
    assert tok.encode_ordinary_batch(texts + thai, num_threads=1) == expected
    assert tok.encode_ordinary_batch(texts + thai, num_threads=1) == expected


SURROGATE_TEXT = st.lists(st.one_of(FRAGMENTS, st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\ud83d", "\ude00"])),
                          max_size=12).map("".join)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=SURROGATE_TEXT)
def test_surrogates_as_tiktoken(pair, text):
    """A surrogate pair in a Python str is its character, a lone surrogate U+FFFD, as in tiktoken."""
    tok, ref = pair
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert tok.encode_ordinary_batch([text, "x"]) == [ref.encode_ordinary(text), ref.encode_ordinary("x")]
    assert tok.token_count(text) == len(ref.encode_ordinary(text))


@pytest.mark.parametrize("call", ["encode", "encode_ordinary", "token_count"])
@pytest.mark.parametrize("bad", [None, 5, b"bytes", ["a"]])
def test_non_text_is_a_type_error_as_in_tiktoken(pair, call, bad):
    tok, ref = pair
    with pytest.raises(TypeError):
        getattr(ref, call if call != "token_count" else "encode_ordinary")(bad)
    with pytest.raises(TypeError):
        getattr(tok, call)(bad)


@pytest.mark.parametrize("ids", [[1.9999], ["1"], [None], [1, 2.5], [1.5] * 70, [1] * 69 + [2.5], [7] * 80 + ["x"]])
def test_non_integer_ids_are_a_type_error_as_in_tiktoken(pair, ids):
    tok, ref = pair
    with pytest.raises(TypeError):
        ref.decode(ids)
    with pytest.raises(TypeError):
        tok.decode(ids)
    with pytest.raises(TypeError):
        tok.decode_bytes(ids)


def test_batch_of_non_text_names_the_item(pair):
    tok, _ = pair
    with pytest.raises(TypeError, match="text 1 is NoneType"):
        tok.encode_batch(["a", None])
    with pytest.raises(TypeError, match="a list of str"):
        tok.encode_ordinary_batch("not a list")
