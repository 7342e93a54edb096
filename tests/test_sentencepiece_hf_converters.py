"""The tokenizer.json files `transformers`' model converters write (T5, XLM-R, Reformer: Precompiled,
Strip(right), Replace( {2,} -> "▁"), Metaspace; ALBERT, XLNet: Replace, NFKD, StripAccents,
Lowercase, Precompiled, Replace( {2,} -> " "), Metaspace; older T5 files: Precompiled then
WhitespaceSplit + Metaspace; Gemma: Replace(" " -> "▁"), Split(" ", MergedWithPrevious), byte
fallback), converted at test time from the fixture `.model`s: ids equal HF `tokenizers`'
`encode(text, add_special_tokens=False)`, decoded text its `decode`."""
from __future__ import annotations

import json
import types
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

sentencepiece = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
convert_slow = pytest.importorskip("transformers.convert_slow_tokenizer")

from sqltok import Tokenizer  # noqa: E402
from sqltok.formats.errors import UnsupportedTokenizerError  # noqa: E402
from sqltok.sentencepiece.hf_tokenizer import HfSentencePieceTokenizer  # noqa: E402
from test_sentencepiece_hf import MISTRAL_V1, MODELS, _texts, generic_json  # noqa: E402

BOTCHAN = MODELS / "botchan_en_unigram_1000.model"
KYOTO = MODELS / "kyoto_ja_unigram_8000.model"


def converted(converter: str, model: Path, **options) -> str:
    """`transformers`' converter run over a stand-in for the slow tokenizer it expects (its
    vocabulary file, its options, and piece ids from sentencepiece)."""
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    slow = types.SimpleNamespace(vocab_file=str(model), convert_tokens_to_ids=sp.piece_to_id, pad_token="<pad>",
                                 eos_token="</s>", bos_token="<s>", _extra_ids=3, **options)
    return getattr(convert_slow, converter)(slow).converted().to_str()


def old_t5_json(model: Path) -> str:
    """What transformers 4 wrote for T5: Precompiled alone, WhitespaceSplit then Metaspace
    (add_prefix_space), a Metaspace decoder."""
    doc = json.loads(converted("T5Converter", model))
    doc["normalizer"] = doc["normalizer"]["normalizers"][0]
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}]}
    doc["decoder"] = {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}
    return json.dumps(doc)


def gemma_json(model: Path) -> str:
    """GemmaConverter's normalizer, pre-tokenizer and decoder over the generic converter's BPE
    model (transformers 5.24's Gemma extractor fails on BPE models)."""
    tok = tokenizers.Tokenizer.from_str(generic_json(model))
    n, p, d = tokenizers.normalizers, tokenizers.pre_tokenizers, tokenizers.decoders
    tok.normalizer = n.Replace(" ", "▁")
    tok.pre_tokenizer = p.Split(" ", "merged_with_previous")
    tok.decoder = d.Sequence([d.Replace("▁", " "), d.ByteFallback(), d.Fuse()])
    return tok.to_str()


CASES = {
    "t5": lambda m: converted("T5Converter", m),
    "t5-old": old_t5_json,
    "xlm-roberta": lambda m: converted("XLMRobertaConverter", m),
    "albert-lower": lambda m: converted("AlbertConverter", m, keep_accents=False, do_lower_case=True),
    "albert-accents": lambda m: converted("AlbertConverter", m, keep_accents=True, do_lower_case=True),
    "xlnet": lambda m: converted("XLNetConverter", m, keep_accents=False, do_lower_case=False),
}
_CACHE: dict = {}


def _pair(case: str, model: Path):
    if (case, model) not in _CACHE:
        text = gemma_json(model) if case == "gemma" else CASES[case](model)
        _CACHE[case, model] = HfSentencePieceTokenizer.from_json(text, case), tokenizers.Tokenizer.from_str(text)
    return _CACHE[case, model]


def _same(tok, hf, texts: list[str]) -> None:
    ours = tok.encode_batch(texts, allowed_special="all")  # HF always matches added tokens
    theirs = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert [t for t, a, b in zip(texts, ours, theirs) if a != b] == []
    assert tok.decode_batch(theirs) == hf.decode_batch(theirs)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("model", [BOTCHAN, KYOTO], ids=["botchan", "kyoto"])
def test_fixture_languages(case, model):
    _same(*_pair(case, model), _texts(25))


def test_gemma_fixture_languages():
    _same(*_pair("gemma", MISTRAL_V1), _texts(25))


WHITESPACE = " \t\n\r\u00a0\u1680\u2003\u3000\u205f▁"
# whitespace runs, accents (precomposed and combining: HF's Precompiled replaces a short grapheme
# by the rule of its shortest prefix, "Ａ\u0301" -> "A"), fullwidth and halfwidth forms, jamo,
# case pairs
TEXT = (st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
        | st.text(WHITESPACE + "ab.1éÉ漢Ａｶﾞ\u0301\u0302\u200d가\u11a8İıß``''\"", max_size=24))


@settings(max_examples=80, deadline=None)
@given(TEXT)
def test_hypothesis_text(text):
    for case in sorted(CASES):
        tok, hf = _pair(case, BOTCHAN)
        ids = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, allowed_special="all") == ids, case
        assert tok.decode(ids) == hf.decode(ids), case
    tok, hf = _pair("gemma", MISTRAL_V1)
    ids = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == ids
    assert tok.decode(ids) == hf.decode(ids)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 999), max_size=10))
def test_metaspace_decoder_any_ids(ids):
    """The Metaspace decoder drops every "▁" of the first token after the skipped special tokens."""
    for case in ("t5", "t5-old"):
        tok, hf = _pair(case, BOTCHAN)
        assert tok.decode(ids) == hf.decode(ids), case
        assert tok.decode(ids, skip_special_tokens=False) == hf.decode(ids, skip_special_tokens=False), case


def test_special_tokens_between_text():
    tok, hf = _pair("albert-lower", BOTCHAN)
    text = "Hi  THERE</s>  Café<s>x "
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


def test_precompiled_by_grapheme():
    """HF's Precompiled goes grapheme by grapheme: a grapheme under 6 bytes that starts with a rule
    becomes that rule's replacement whole; sentencepiece's longest match keeps the mark."""
    tok, hf = _pair("t5", BOTCHAN)
    for text in ("Ａ\u0301b", "\u3000\u0301a", "e\u0301\u0302 x", "ｶﾞ", "a\r\nb", "\U0001F44D\U0001F3FD"):
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


def test_lowercase_as_rust():
    """Lowercase is Rust's per-character full mapping: "İ" -> "i̇", "Σ" -> "σ" even at a word's end."""
    tok, hf = _pair("albert-accents", BOTCHAN)
    for text in ("İstanbul ΣΑΣ", "DİŞ İİ", "ǅ Ǆ"):
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


def test_loads_by_content(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(CASES["xlnet"](BOTCHAN), encoding="utf-8")
    tok = Tokenizer.load(path)
    assert isinstance(tok, HfSentencePieceTokenizer)
    assert tok.encode("Hello  world") == tokenizers.Tokenizer.from_file(str(path)).encode(
        "Hello  world", add_special_tokens=False).ids


@pytest.mark.parametrize("edit, named", [
    (lambda d: d["normalizer"]["normalizers"].insert(0, {"type": "Strip", "strip_left": True,
                                                         "strip_right": True}), "Strip"),
    (lambda d: d["normalizer"]["normalizers"].append({"type": "NFKD"}), "NFKD"),
    (lambda d: d["normalizer"]["normalizers"].insert(0, {"type": "Replace", "pattern": {"Regex": "a+"},
                                                         "content": "b"}), "Replace"),
    (lambda d: d.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Punctuation", "behavior": "Isolated"}, d["pre_tokenizer"]]}), "Punctuation"),
    (lambda d: d["pre_tokenizer"].update(prepend_scheme="first"), "prepend_scheme 'first'"),
    (lambda d: d.update(pre_tokenizer=None), "without a Metaspace"),
    (lambda d: d.update(decoder={"type": "Metaspace", "replacement": "_", "prepend_scheme": "always"}),
     "Metaspace"),
])
def test_refused_components(edit, named):
    doc = json.loads(CASES["t5"](BOTCHAN))
    edit(doc)
    with pytest.raises(UnsupportedTokenizerError, match=named):
        HfSentencePieceTokenizer.from_json(json.dumps(doc), "t5")
