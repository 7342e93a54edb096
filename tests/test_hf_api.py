"""HF `tokenizers`' lookups (`token_to_id`, `id_to_token`, `get_vocab`, `get_vocab_size`) and
character offsets (`Encoding.offsets`) on sqltok's tokenizers, checked against HF itself on the
fixture tokenizer.json files (o200k, cl100k, Llama 3, Qwen 3, bert-base-uncased, Mistral v1 converted
to a SentencePiece-style one) and GPT-2's vocab.json + merges.txt, over every fixture corpus and
generated text."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqltok

from conftest import SHARED_TOKENIZERS

tokenizers = pytest.importorskip("tokenizers")
from tokenizers.implementations import ByteLevelBPETokenizer  # noqa: E402

CORPORA = SHARED_TOKENIZERS.parent / "corpora"
SHARED_JSON = ["o200k_base", "cl100k_base", "llama3", "qwen3"]
needs_shared = pytest.mark.skipif(not SHARED_TOKENIZERS.is_dir(), reason="../shared/fixtures not present")


def corpus_texts(per_file: int = 5, chars: int = 3000) -> list[str]:
    """The first documents of every fixture corpus, each cut to `chars` characters."""
    texts = []
    for path in sorted(CORPORA.glob("*.jsonl")):
        with open(path, encoding="utf-8") as f:
            texts += [json.loads(next(f))["text"][:chars] for _ in range(per_file)]
    return texts


@pytest.fixture(scope="module", params=[*SHARED_JSON, "gpt2", "bert-base-uncased", "mistral-v1"])
def pair(request, bundled, tmp_path_factory):
    """(sqltok tokenizer, HF Tokenizer) read from the same file(s)."""
    name = request.param
    if name == "mistral-v1":  # a SentencePiece-style tokenizer.json, converted from the .model
        from test_sentencepiece_hf import llama_json  # (skips without transformers)
        path = tmp_path_factory.mktemp("mistral") / "tokenizer.json"
        path.write_text(llama_json(bundled("mistral_tokenizer.model.v1"), True), encoding="utf-8")
        return sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    if name == "gpt2":
        vocab, merges = bundled("gpt2_vocab.json"), bundled("gpt2_merges.txt")
        return sqltok.Tokenizer.load(vocab), ByteLevelBPETokenizer.from_file(str(vocab), str(merges))._tokenizer
    if name == "bert-base-uncased":
        path = bundled("bert-base-uncased_tokenizer.json")
    else:
        if not SHARED_TOKENIZERS.is_dir():
            pytest.skip("../shared/fixtures not present")
        path = SHARED_TOKENIZERS / name / "tokenizer.json"
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.no_padding()
    hf.no_truncation()
    return sqltok.Tokenizer.load(path), hf


def test_lookups_equal_hf(pair):
    tok, hf = pair
    for added in (True, False):
        assert tok.get_vocab(with_added_tokens=added) == hf.get_vocab(with_added_tokens=added)
        assert tok.get_vocab_size(with_added_tokens=added) == hf.get_vocab_size(with_added_tokens=added)
    vocab = hf.get_vocab()
    strings = [*list(vocab)[::50], *tok.special_tokens, "no such token", "", "Ġ" * 40]
    assert [tok.token_to_id(s) for s in strings] == [hf.token_to_id(s) for s in strings]
    ids = [*range(0, tok.n_vocab + 3, 37), *tok.special_tokens.values(), tok.n_vocab - 1, tok.n_vocab]
    assert [tok.id_to_token(i) for i in ids] == [hf.id_to_token(i) for i in ids]


def test_lookups_refuse_wrong_types_as_hf(pair):
    """HF's lookups take a str and a u32: a float or a str id is a TypeError, a negative id an
    OverflowError (sqltok answered None, or for 5.0 the token of 5, as a dict lookup does)."""
    import numpy as np

    tok, hf = pair
    for bad in (5.0, np.float64(5.0), "5", None, -1, 2**32, 2**64):
        with pytest.raises((TypeError, OverflowError)) as want:
            hf.id_to_token(bad)
        with pytest.raises(want.type):
            tok.id_to_token(bad)
    for bad in (None, 5, b"the"):
        with pytest.raises(TypeError):
            hf.token_to_id(bad)
        with pytest.raises(TypeError):
            tok.token_to_id(bad)
    assert tok.id_to_token(np.int64(5)) == hf.id_to_token(np.int64(5)) == tok.id_to_token(5)


def _hf_encoding(tok, hf, text):
    """HF's encoding of `text` as sqltok's `encode_with_offsets` defines it (WordPiece: with the
    template, as `encode`; byte-level BPE: none, as `encode_ordinary`)."""
    return hf.encode(text, add_special_tokens=isinstance(tok, sqltok.WordPieceTokenizer))


@needs_shared
def test_offsets_equal_hf_on_every_corpus(pair):
    tok, hf = pair
    for text in corpus_texts():
        want = _hf_encoding(tok, hf, text)
        got = tok.encode_with_offsets(text)
        assert got.ids == want.ids
        assert got.offsets == want.offsets


EDGE = ["", " ", "Hello, WORLD!", "  lead and trail  ", "e\u0301te\u0301 a\u0323\u0307b \u1e0b\u0323 x\u0301\u0301",
        "\u0301start", "€uro 𝄞 🙂👍🏽", "日本語 中文 한국어", "Héllo İstanbul ﬁne Σίσυφος ǅemal",
        "a\x00b\x7f \t\u200bc\ufffd", "\u0363\U0001d165\u00ed \u0301\U0001d165x", "x" * 150 + " ok", "don't ##x",
        "ÅΩ\u212b\u2126"]


def test_offsets_equal_hf_on_edge_cases(pair):
    tok, hf = pair
    for text in EDGE:
        want = _hf_encoding(tok, hf, text)
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets), text


ALPHABET = st.sampled_from([*"aAeEzZ 09.,!'#\n\t", "\u0301", "\u0323", "\u0307", "\u0308", "\U0001d165", "é", "Å",
                            "ﬁ", "İ", "ß", "Σ", "ς", "日", "本", "한", "\u00a0", "\u3000", "\x00", "\x07", "\u200d",
                            "🙂", "€"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(ALPHABET, max_size=30))
def test_offsets_equal_hf_on_generated_text(pair, text):
    tok, hf = pair
    want = _hf_encoding(tok, hf, text)
    assert tok.encode_with_offsets(text) == (want.ids, want.offsets)


def test_offsets_cover_the_text(bundled):
    """Byte-level tokens cover the text back to back: each token starts where the previous ended, or
    one character earlier when the previous token ended inside that character."""
    tok = sqltok.Tokenizer.load(bundled("r50k_base.tiktoken"))
    text = "A €uro, 𝄞 and 日本 🙂 text"
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == tok.encode_ordinary(text) and offsets[0][0] == 0 and offsets[-1][1] == len(text)
    for (s0, e0), (s1, e1) in zip(offsets, offsets[1:]):
        assert s1 in (e0, e0 - 1) and s0 <= s1 < e1 and e0 <= e1
    with pytest.raises(sqltok.SqltokError, match="surrogate"):
        tok.encode_with_offsets("a\ud800b")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(0, 2999) | st.sampled_from(range(8)), max_size=8), min_size=1, max_size=4),
       st.data())
def test_decode_skip_special_tokens_equals_hf(pair, batch, data):
    """`decode` / `decode_batch` with `skip_special_tokens` either way give HF's; special ids mixed in."""
    tok, hf = pair
    specials = sorted(tok.special_tokens.values())
    batch = [[specials[i % len(specials)] if i < 8 and specials else i for i in ids] for ids in batch]
    for skip in (True, False):
        assert tok.decode(batch[0], skip_special_tokens=skip) == hf.decode(batch[0], skip_special_tokens=skip)
        assert tok.decode_batch(batch, skip_special_tokens=skip) == hf.decode_batch(batch, skip_special_tokens=skip)
    # the families' defaults: WordPiece as HF's (skip), byte-level BPE as tiktoken's (keep)
    assert tok.decode(batch[0]) == hf.decode(batch[0], skip_special_tokens=tok.skips_special_tokens)


def _gpt2_split(bundled, tmp_path, regex: str, behavior: str, invert: bool):
    """GPT-2's byte-level BPE as a tokenizer.json whose pre-tokenizer is Split(regex) then ByteLevel."""
    doc = json.loads(ByteLevelBPETokenizer.from_file(str(bundled("gpt2_vocab.json")),
                                                     str(bundled("gpt2_merges.txt")))._tokenizer.to_str())
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": invert},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("regex", [r"\S+", r"[a-z]+", r"(\w)+"])
def test_split_isolated_keeps_the_text_between_matches(bundled, tmp_path, regex):
    """A byte-level BPE tokenizer.json whose Split(Isolated) regex sqltok's matcher does not know and
    that leaves text unmatched: HF makes each run between two matches a pretoken too (sqltok dropped
    it, "hello world" lost its space), and takes whole matches; ids and offsets equal HF's."""
    path = _gpt2_split(bundled, tmp_path, regex, "Isolated", False)
    tok, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    for text in ["hello world  x", "Hello, World! 123", "", " ", "naïve café\n\t日本 🙂"]:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode_ordinary(text) == want.ids, text
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets), text
    assert tok.encode_ordinary_batch(["hello world  x"] * 70) == [hf.encode("hello world  x").ids] * 70


@pytest.mark.parametrize("regex", [r"\S+", r"[a-z]+|日"])
def test_offsets_where_the_split_removes_text(bundled, tmp_path, regex):
    """Split(Removed, invert) keeps only the matches: the tokens leave the rest of the text out, and
    their offsets are HF's (`encode_with_offsets` raised "the tokens do not cover the text's bytes"),
    also for a .tiktoken file whose pattern= leaves text out (tiktoken drops what no match covers)."""
    path = _gpt2_split(bundled, tmp_path, regex, "Removed", True)
    tok, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    custom = tmp_path / "custom.tiktoken"
    custom.write_bytes(bundled("r50k_base.tiktoken").read_bytes() + b"YWJjZGVmZ2g= 50257\n")
    plain = sqltok.Tokenizer.load(custom, pattern=regex)
    for text in ["hello world  x", "Hello, World! 123", "", "   ", "  naïve café\n\t日本 🙂 "]:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets), text
        assert plain.encode_with_offsets(text) == (want.ids, want.offsets), text


def test_offsets_with_added_tokens_that_take_in_white_space(bundled, tmp_path):
    """Added tokens with lstrip/rstrip (RoBERTa's and BART's <mask>): an added token's offsets are its
    match, the white space it takes in included, as HF gives them; a special one is text here
    (`encode_ordinary`). sqltok refused offsets for every text of such a tokenizer."""
    from tokenizers import AddedToken

    hf = ByteLevelBPETokenizer.from_file(str(bundled("gpt2_vocab.json")), str(bundled("gpt2_merges.txt")))._tokenizer
    hf.add_special_tokens([AddedToken("<mask>", lstrip=True), "<s>"])
    hf.add_tokens([AddedToken("<ent>", rstrip=True), AddedToken("[L]", lstrip=True, rstrip=True)])
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str(), encoding="utf-8")
    tok = sqltok.Tokenizer.load(path)
    for text in ["hello world", "a <ent>  b", "a   <ent>b", "<ent> x", "<ent>", "  <ent>  ", "ü<ent>日 \t[L]\n x",
                 "[L][L] [L]", "", "x <ent>\u3000y"]:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets), text
    ids, offsets = tok.encode_with_offsets("x <mask> y")
    assert ids == tok.encode_ordinary("x <mask> y") and offsets[-1] == (8, 10)
