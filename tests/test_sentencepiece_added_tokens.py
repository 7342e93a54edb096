"""SentencePiece tokenizer.json files (Unigram, BPE with byte fallback, as transformers' converters
write them) with HF's added tokens: non-special ones (the converters' user-defined pieces, Mistral
v3's [REFERENCE_DOC_n]), and special or not with HF's flags (lstrip, rstrip, single_word; normalized
without a normalizer). Ids (the direct and the Arrow path) and decoding identical to HF `tokenizers`
on fixed and hypothesis texts; HF splits the text at them before the normalizer, so each text
between them gets its own dummy prefix (Metaspace "always", Prepend) or none (Metaspace "first")."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("transformers.convert_slow_tokenizer")

from sqltok.formats.errors import UnsupportedTokenizerError  # noqa: E402
from sqltok.sentencepiece.hf_tokenizer import HfSentencePieceTokenizer  # noqa: E402
from test_sentencepiece_hf import MISTRAL_V1, _proto, convert_slow, generic_json, llama_json  # noqa: E402

AddedToken = tokenizers.AddedToken


def _with(text: str, tokens: list, special_flags: dict | None = None) -> str:
    """A tokenizer.json with `tokens` added (not special) and flags set on its special tokens."""
    tok = tokenizers.Tokenizer.from_str(text)
    tok.add_tokens(tokens)
    doc = json.loads(tok.to_str())
    for entry in doc["added_tokens"]:
        entry.update((special_flags or {}).get(entry["content"], {}))
    return json.dumps(doc)


def v3_json() -> str:
    """Mistral v3 converted: its user-defined pieces as non-special added tokens (and merges kept:
    the converter's ignore_merges is not this test's matter)."""
    m = _proto(MISTRAL_V1.parent / "mistral_instruct_tokenizer_240323.model.v3")
    tok = convert_slow.SpmConverter.build_tokenizer_from_spm_proto(m, {p.piece: i for i, p in enumerate(m.pieces)})
    tok.add_tokens([AddedToken(p.piece, normalized=False, special=False) for p in m.pieces if p.type == 4])
    doc = json.loads(tok.to_str())
    doc["model"]["ignore_merges"] = False
    return json.dumps(doc)


FLAGGED = [AddedToken("ing", single_word=True, normalized=False), AddedToken("ed", lstrip=True, normalized=False),
           AddedToken("er", rstrip=True, normalized=False), AddedToken("in", normalized=False)]

#: Each case's tokenizer.json from `bundled` (tests/data/tokenizers).
CASES = {
    "mistral-v3-user-defined": lambda bundled: v3_json(),
    "botchan-unigram-flags": lambda bundled: _with(generic_json(bundled("botchan_en_unigram_1000.model")), FLAGGED,
                                                   {"</s>": {"lstrip": True, "rstrip": True}}),
    "botchan-bpe-flags": lambda bundled: _with(generic_json(bundled("botchan_en_bpe_1000.model")), FLAGGED,
                                               {"<s>": {"single_word": True}}),
    "mistral-v1-llama-legacy-flags": lambda bundled: _with(llama_json(MISTRAL_V1, True), FLAGGED),
    # no normalizer: normalized tokens are matched in the raw text, after the others
    "mistral-v1-llama-first-normalized": lambda bundled: _with(
        llama_json(MISTRAL_V1, False), FLAGGED + [AddedToken("ing", normalized=True), AddedToken("▁the", normalized=True),
                                                  AddedToken("he", normalized=True, lstrip=True)]),
}

PIECES = ["ing", "ed", "er", "in", "▁the", "he", "the", "<s>", "</s>", "[INST]", "[REFERENCE_DOC_0]",
          "[REFERENCE_DOC_12]", " ", "  ", "\t", "\n", "\u3000", "a", "x", "T", ".", "-", "é", "日本", "😀", "1"]

FIXED = ["", " ", "sing singing sing. ing", "walked ed  ed red", "her   er  here", "in inn tin",
         "<s>hi </s> x</s>y", " <s> in", "hello[REFERENCE_DOC_0]world", "[REFERENCE_DOC_1] x [INST] y",
         "a  [REFERENCE_DOC_2]  b", "the  theing he▁the", "日本ing 😀ed\ter\n", "ing", "  ing  "]


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, bundled):
    text = CASES[request.param](bundled)
    return HfSentencePieceTokenizer.from_json(text, request.param), tokenizers.Tokenizer.from_str(text)


def check_like_hf(tok, hf, texts: list[str]) -> None:
    expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    for text, ids in zip(texts, expected):
        assert tok.encode(text, allowed_special="all") == ids, repr(text)
    assert tok.encode_batch(texts * (64 // max(len(texts), 1) + 1), allowed_special="all")[:len(texts)] == expected
    assert tok.encode_arrow(pa.array(texts + [None]), "all").to_pylist() == expected + [None]
    assert tok.encode_arrow(pa.array(texts), "all", counts_only=True).to_pylist() == [len(x) for x in expected]
    for ids in expected:
        assert tok.decode(ids) == hf.decode(ids)


def test_fixed_texts(pair):
    check_like_hf(*pair, FIXED)


_PAIRS: list = []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=10).map("".join), min_size=1, max_size=4))
def test_hypothesis_texts(bundled, texts):
    if not _PAIRS:
        for name, make in CASES.items():
            text = make(bundled)
            _PAIRS.append((HfSentencePieceTokenizer.from_json(text, name), tokenizers.Tokenizer.from_str(text)))
    for tok, hf in _PAIRS:
        check_like_hf(tok, hf, texts)


def test_special_text_is_text_unless_allowed(pair):
    """sqltok's `encode` keeps tiktoken's policy for special tokens (HF's `encode_special_tokens`);
    the other added tokens are matched always."""
    tok, hf = pair
    text = "x<s>walked in </s>"
    hf.encode_special_tokens = True
    try:
        assert tok.encode(text, disallowed_special=()) == hf.encode(text, add_special_tokens=False).ids
    finally:
        hf.encode_special_tokens = False


@pytest.mark.parametrize("token, named", [
    (AddedToken("ing", normalized=True), "'ing' with normalized true under a normalizer"),
    (AddedToken("not-a-piece-xyz", normalized=False), "'not-a-piece-xyz' that is not a vocabulary piece"),
])
def test_refused_by_name(bundled, token, named):
    text = _with(generic_json(bundled("botchan_en_unigram_1000.model")), [token])
    with pytest.raises(UnsupportedTokenizerError, match=named):
        HfSentencePieceTokenizer.from_json(text, "refused")
