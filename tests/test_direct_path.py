"""The direct path (one Python str, or a short list, without Arrow) gives what the Arrow path gives, for
every call: encode with special tokens allowed or not, encode_ordinary, token_count, tokens, short
and long batches, decode and decode_bytes; surrogates fixed as the Arrow path fixes them (BPE) or
refused (WordPiece); every family of BPE encoder (tiktoken ranks, reference models with and without
supermerges, an NFC tokenizer, a pattern only Python's `regex` runs)."""
from __future__ import annotations

import gzip

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqltok
from sqltok import BPETokenizer, Tokenizer
from sqltok.bpe.reference_file import loads
from sqltok.tokenizer import id_array, text_array

FRAGMENTS = st.sampled_from(["<|endoftext|>", "[SEP]", "[CLS]", "<|endoftext", "'s", " ", "  ", "\n", "\r\n",
                             "123", "!!", "é", "e\u0301", "日本", "ไทย", "Привет", "🙂", "a", "Z", "the", " of",
                             "\ud800", "\ud83d\ude00", "\ude00", "qxzjkv" * 3, "ab" * 40])
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=6)), max_size=20).map("".join)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def golden(golden_dir, name: str) -> BPETokenizer:
    return BPETokenizer.from_model(loads(gzip.decompress((golden_dir / f"{name}.model.gz").read_bytes()).decode()), name)


@pytest.fixture(scope="module", params=["o200k", "r50k", "regex", "nfc", "bpe_en_v8192", "super_en_v8192",
                                        "bert"])
def tok(request, bundled, golden_dir) -> Tokenizer:
    name = request.param
    if name == "o200k":
        return Tokenizer.load(bundled("o200k_base.tiktoken"))
    if name == "r50k":
        return Tokenizer.load(bundled("r50k_base.tiktoken"))
    if name == "regex":  # a pattern sqltok's matcher does not know: split by Python's regex
        return Tokenizer.load(bundled("r50k_base.tiktoken"), pattern=r"\s+|\w+|[^\s\w]+")
    if name == "nfc":  # a normalizing tokenizer (as Qwen's): ASCII goes direct, the rest through NFC
        base = Tokenizer.load(bundled("r50k_base.tiktoken"))
        return BPETokenizer("nfc", base._encoder, base.special_tokens, base.pattern, "NFC")
    if name == "bert":
        return Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))
    return golden(golden_dir, name)


def arrow_ids(tok: Tokenizer, texts: list[str], allowed=(), counts_only: bool = False) -> list:
    return tok.encode_arrow(text_array(texts, tok.fixes_surrogates), allowed, 1, counts_only).to_pylist()


def allowed_choices(tok: Tokenizer) -> list:
    return [(), "all"] + [{s} for s in sorted(tok.special_tokens)[:2]]


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@SETTINGS
@given(texts=st.lists(TEXT, max_size=5), pick=st.integers(0, 3))
def test_every_encoding_call_equals_the_arrow_path(tok, texts, pick):
    allowed = allowed_choices(tok)[pick % len(allowed_choices(tok))]
    if not tok.fixes_surrogates and any(map(has_surrogate, texts)):
        with pytest.raises(sqltok.SqltokError, match="lone surrogate"):
            tok.encode_ordinary_batch(texts)
        bad = next(t for t in texts if has_surrogate(t))
        for call in (tok.encode_ordinary, tok.token_count, tok.tokens):
            with pytest.raises(sqltok.SqltokError, match="lone surrogate"):
                call(bad)
        with pytest.raises(sqltok.SqltokError, match="lone surrogate"):
            tok.encode(bad, allowed_special=allowed, disallowed_special=())
        return
    ordinary, special = arrow_ids(tok, texts), arrow_ids(tok, texts, allowed)
    assert [tok.encode_ordinary(t) for t in texts] == ordinary
    assert [tok.token_count(t) for t in texts] == arrow_ids(tok, texts, counts_only=True) == list(map(len, ordinary))
    assert [tok.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts] == special
    assert tok.encode_ordinary_batch(texts) == ordinary
    assert tok.encode_batch(texts, allowed_special=allowed, disallowed_special=()) == special
    many = texts * (64 // max(len(texts), 1) + 1)  # 64 texts or more: the Arrow path
    assert tok.encode_ordinary_batch(many) == ordinary * (64 // max(len(texts), 1) + 1)
    if texts:
        assert [tok.tokens(t) for t in texts] == tok.tokens_arrow(text_array(texts, tok.fixes_surrogates)).to_pylist()


@SETTINGS
@given(text=TEXT)
def test_disallowed_special_text_is_refused_on_the_direct_path(tok, text):
    specials = [s for s in tok.special_tokens if s in text]
    if specials or (not tok.fixes_surrogates and has_surrogate(text)):
        with pytest.raises((ValueError, sqltok.SqltokError)):
            tok.encode(text)
    else:
        assert tok.encode(text) == tok.encode_ordinary(text)


@SETTINGS
@given(text=TEXT, noise=st.lists(st.integers(0, 300_000), max_size=8))
def test_decode_equals_the_arrow_path(tok, text, noise):
    if not tok.fixes_surrogates and has_surrogate(text):
        return
    ids = tok.encode(text, allowed_special="all", disallowed_special=()) + [i % tok.n_vocab for i in noise]
    try:
        expected = tok.decode_arrow(id_array(ids))[0].as_py()
    except ValueError as e:  # an id without a token (BPE vocabularies may have gaps)
        with pytest.raises(ValueError, match=str(e).split("(")[0].strip()):
            tok.decode(ids)
        return
    assert tok.decode(ids) == expected
    assert tok.decode(tuple(ids)) == expected
    if isinstance(tok, BPETokenizer):
        assert tok.decode_bytes(ids) == b"".join(tok.decode_tokens_bytes(ids))
    else:
        assert tok.decode_bytes(ids) == expected.encode()


def test_decode_refuses_what_the_arrow_path_refuses(tok):
    """What tiktoken raises: an id no u32 holds is an OverflowError, before an item that is no integer
    (tiktoken converts the ids in order), which is a TypeError (an UnknownTokenError is a KeyError
    and a ValueError)."""
    for ids, error in (([tok.n_vocab], KeyError), ([-1], OverflowError), ([2**31], KeyError), ([2**70], OverflowError),
                       ([1, "x"], TypeError), ([1.0], TypeError), ([2**70, "x"], OverflowError),
                       (["x", 2**70], TypeError), (5, TypeError)):
        with pytest.raises(error):
            tok.decode(ids)
        with pytest.raises(error):
            tok.decode_bytes(ids)
    assert tok.decode([True]) == tok.decode([1])


def test_empty_and_long_texts(tok):
    assert tok.encode_ordinary("") == arrow_ids(tok, [""])[0]
    assert tok.token_count("") == len(arrow_ids(tok, [""])[0])
    assert tok.encode_ordinary_batch([]) == []
    assert tok.decode([]) == "" and tok.decode_bytes([]) == b""
    long = "Lorem ipsum dolor sit amet, ünïcödé 日本語 🙂 " * 400  # past the size that encodes without the GIL
    assert tok.encode_ordinary(long) == arrow_ids(tok, [long])[0]
    assert tok.token_count(long) == len(arrow_ids(tok, [long])[0])


def test_direct_calls_keep_no_arrow_on_the_way(bundled, monkeypatch):
    """The single-text calls of the families with a direct path never build an Arrow array."""
    toks = [Tokenizer.load(bundled("o200k_base.tiktoken")), Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))]

    def refuse(*args, **kwargs):
        raise AssertionError("an Arrow array was built")

    for t in toks:
        t.tokens("warm up")  # the token strings table is built once, from Arrow
    monkeypatch.setattr(pa, "array", refuse)
    for t in toks:
        ids = t.encode("x <|endoftext|> y [SEP]", allowed_special="all")
        assert t.encode_ordinary("hello") and t.token_count("hello") and t.tokens("hello")
        assert t.encode_batch(["a", "b"]) and t.encode_ordinary_batch(["a"])
        assert t.decode(ids) and t.decode_bytes(ids)


def test_a_stream_of_single_calls_equals_tiktoken(bundled):
    """Single calls one after another grow their workspace's pretoken cache as a batch of their total
    size would have it (`direct_bytes`), in place, keeping what it held, and its cache of long
    pretokens as it fills (554 distinct ones of over 24 bytes here): every line of the 13-language
    sample, one call each, twice (the second pass reads the first's pretokens), equals tiktoken."""
    import json
    from pathlib import Path

    from conftest import tiktoken_pair

    tok, ref = tiktoken_pair(bundled("o200k_base.tiktoken"))
    sample = Path(__file__).parent / "data" / "corpora_sample.jsonl"
    lines = [line for row in sample.open(encoding="utf-8") for line in json.loads(row)["text"].split("\n") if line]
    want = ref.encode_ordinary_batch(lines)
    for _ in range(2):
        assert [tok.encode_ordinary(line) for line in lines] == want
