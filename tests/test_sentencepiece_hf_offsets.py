"""`encode_with_offsets` on SentencePiece-style tokenizer.json files (Unigram; BPE with byte fallback,
with `ignore_merges` too): ids and character offsets equal HF `tokenizers`'
`encode(text, add_special_tokens=False)` `.ids` and `.offsets`, on every pipeline the converters
write (generic, Llama legacy and "first", T5, older T5, XLM-R, ALBERT, XLNet, Gemma), with added
tokens and their flags, over every fixture language, edge cases and generated text."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("transformers.convert_slow_tokenizer")

from sqltok import SqltokError  # noqa: E402
from sqltok.normalizers.hf_normalized import AlignmentError, Normalized  # noqa: E402
from sqltok.sentencepiece.hf_tokenizer import HfSentencePieceTokenizer  # noqa: E402
from test_sentencepiece_added_tokens import CASES as ADDED_CASES  # noqa: E402
from test_sentencepiece_hf import (CASES as GENERIC_CASES, IGNORE_MERGES, MISTRAL_V1, MODELS, _texts,  # noqa: E402
                                   generic_json)
from test_sentencepiece_hf_converters import BOTCHAN, CASES as CONVERTER_CASES, KYOTO, gemma_json  # noqa: E402

def unigram_byte_fallback_json() -> str:
    """botchan's Unigram with byte pieces and byte_fallback: the byte pieces of an unknown run (HF's
    Unigram fuses it into one string) all cover the whole run."""
    doc = json.loads(generic_json(MODELS / "botchan_en_unigram_1000.model"))
    doc["model"]["vocab"] += [[f"<0x{b:02X}>", -50.0] for b in range(256)]
    doc["model"]["byte_fallback"] = True
    return json.dumps(doc)


CASES = {
    **{name: lambda bundled, make=make: make() for name, make in GENERIC_CASES.items()},
    "botchan-unigram-byte-fallback": lambda bundled: unigram_byte_fallback_json(),
    **{f"{name}-{model.stem.split('_')[0]}": lambda bundled, make=make, model=model: make(model)
       for name, make in CONVERTER_CASES.items() for model in (BOTCHAN, KYOTO)},
    "gemma": lambda bundled: gemma_json(MISTRAL_V1),
    **{name: lambda bundled, make=make: make(bundled) for name, make in ADDED_CASES.items()},
    **{f"ignore-merges-{name}": lambda bundled, make=make: make() for name, make in IGNORE_MERGES.items()},
}

EDGE = ["", " ", "   ", "  lead  and   trail  ", "a  b", "x ", " x", "\t\nx\u3000y\u3000", "Hello world",
        "ﬁne ﬂow", "① ② ⑩ ㍿ ½ ™", "ｈｅｌｌｏ！ ＡＢＣ１２３ ｶﾞ", "Ａ\u0301b e\u0301\u0302 x", "😀🦊 👨‍👩‍👧 👍🏽",
        "\u200b\ufeffzero width", "\x00\x01\x7f\x1e", "İstanbul ΣΑΣ ß ǅ", "한국어 ᄀᄀ 가\u11a8", "日本語の文章。",
        "▁▁a▁ ▁", "``quoted'' \"x\"", "<s>hi</s> <s>", "hi<s> there</s>x", "[INST] a [/INST]", "<unk><0x41>",
        "\U0010ffff\ue000x", "a\r\nb", "x" * 300]


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, bundled):
    text = CASES[request.param](bundled)
    return HfSentencePieceTokenizer.from_json(text, request.param), tokenizers.Tokenizer.from_str(text)


def _corpus() -> list[str]:
    """Every fixture language: tests/data/corpora_sample.jsonl and ../shared/fixtures/corpora."""
    with open(Path(__file__).parent / "data" / "corpora_sample.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f] + _texts(40)


def _check(tok, hf, texts: list[str]) -> None:
    for text in texts:
        want = hf.encode(text, add_special_tokens=False)
        got = tok.encode_with_offsets(text, allowed_special="all")
        assert (got.ids, got.offsets) == (want.ids, want.offsets), repr(text)


def test_every_language(pair):
    _check(*pair, _corpus())


def test_edge_cases(pair):
    _check(*pair, EDGE)


PIECES = [" ", "  ", "\t", "\n", "\u3000", "\u00a0", "▁", "a", "Ab", "the", "é", "e\u0301", "\u0308", "ﬁ", "①",
          "Ａ", "ｶﾞ", "½", "İ", "Σ", "ß", "한", "ᄀ", "日本", "😀", "👍🏽", "\u200d", "\u200b", "\x00", "\U0010ffff",
          "<s>", "</s>", "<unk>", "<0x41>", "[INST]", "ing", "ed", "er", "[REFERENCE_DOC_0]", "``", "''"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join) | st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
# HF's StripAccents and NF* steps read Unicode 9.0's tables, so a mark or compatibility character
# assigned since ("\u08ca") is none to HF's ALBERT and XLNet pipelines (their ids differ too; see
# README): for them no other marks than the pieces' and no characters beyond U+2FFF
OLD_TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join) | st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cn", "M"], max_codepoint=0x2FFF), max_size=20)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_generated_text(pair, data):
    tok, hf = pair
    _check(tok, hf, [data.draw(OLD_TEXT if tok.name.startswith(("albert", "xlnet")) else TEXT)])


def test_special_tokens_as_text_unless_allowed(pair):
    """Without `allowed_special` special-token text is text (as `encode_ordinary`), with the offsets
    of its pieces; the ids are `encode`'s either way."""
    tok, _ = pair
    text = "hi <s> x</s>"
    for allowed in ((), "all"):
        ids, offsets = tok.encode_with_offsets(text, allowed_special=allowed)
        assert ids == tok.encode(text, allowed_special=allowed, disallowed_special=())
        assert len(offsets) == len(ids) and all(0 <= s <= e <= len(text) for s, e in offsets)


def test_known_offsets():
    """Llama legacy (Prepend + Replace): "▁" goes with the first character, a space's "▁" with the
    space; Mistral's (BPE) byte pieces of one character all cover it, Unigram's those of a run the
    run; T5's NFKC changes lengths: "ﬁ" ->
    "fi", both from "ﬁ", and of two spaces the "▁" they become stands for the second."""
    tok = HfSentencePieceTokenizer.from_json(GENERIC_CASES["mistral-v1-llama-legacy"](), "legacy")
    ids, offsets = tok.encode_with_offsets("hi \U0010ffff")
    assert [tok.id_to_token(i) for i in ids] == ["▁hi", "▁", "<0xF4>", "<0x8F>", "<0xBF>", "<0xBF>"]
    assert offsets == [(0, 2), (2, 3), (3, 4), (3, 4), (3, 4), (3, 4)]
    tok = HfSentencePieceTokenizer.from_json(unigram_byte_fallback_json(), "unigram")
    ids, offsets = tok.encode_with_offsets("ab日本語x")
    assert [tok.id_to_token(i) for i in ids][1:4] == ["b", "<0xE6>", "<0x97>"] and len(ids) == 12
    assert offsets == [(0, 1), (1, 2)] + [(2, 5)] * 9 + [(5, 6)]
    tok = HfSentencePieceTokenizer.from_json(CONVERTER_CASES["t5"](BOTCHAN), "t5")
    ids, offsets = tok.encode_with_offsets("ﬁ  x")
    assert [tok.id_to_token(i) for i in ids] == ["▁f", "i", "▁", "x"]
    assert offsets == [(0, 1), (0, 1), (2, 3), (3, 4)]


def test_surrogates_refused():
    tok = HfSentencePieceTokenizer.from_json(GENERIC_CASES["botchan-unigram-generic"](), "botchan")
    with pytest.raises(SqltokError, match="surrogate"):
        tok.encode_with_offsets("a\ud800b")


def test_unalignable_refused():
    """A step HF would align by reading out of range, or one with no alignment here, is refused
    with a clear error rather than given wrong offsets."""
    with pytest.raises(AlignmentError, match="past the end"):
        Normalized.of("ab", 0).transform_range(0, 2, [("x", 0), ("y", 0), ("z", 0)], 0)
    tok = HfSentencePieceTokenizer.from_json(GENERIC_CASES["botchan-unigram-generic"](), "botchan")
    tok.hf = dataclasses.replace(tok.hf, hf_normalizer=({"type": "BertNormalizer"},))
    with pytest.raises(SqltokError, match="cannot be aligned as HF aligns them .*BertNormalizer"):
        tok.encode_with_offsets("Hello")


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_decode_with_offsets_follow_hf_decode(pair, data):
    """`decode_with_offsets` gives HF's `decode` text (it gave the pieces as spelled, "▁Hello▁world"),
    and each token starts where the text of the tokens before it ends (HF's decode of them), special
    tokens (left out) where the next part starts; byte tokens: see test_decode_with_offsets_of_byte_runs."""
    tok, hf = pair
    ids = tok.encode(data.draw(TEXT), allowed_special="all", disallowed_special=())
    extra = sorted(tok.special_tokens.values()) + [tok.token_to_id(p) for p in ("▁", "a", "▁the") if tok.token_to_id(p)]
    for _ in range(data.draw(st.integers(0, 3))):
        ids.insert(data.draw(st.integers(0, len(ids))), data.draw(st.sampled_from(extra)))
    text, offsets = tok.decode_with_offsets(ids)
    assert text == hf.decode(ids) and len(offsets) == len(ids)
    byte = [tok.id_to_token(i).startswith("<0x") and hf.decode([i]) != tok.id_to_token(i) for i in ids]
    for k, t in enumerate(ids):
        if t in tok._special_by_id:
            later = [offsets[j] for j in range(k + 1, len(ids)) if ids[j] not in tok._special_by_id]
            assert offsets[k] == (later[0] if later else len(text))
        elif not byte[k]:
            assert offsets[k] == len(hf.decode(ids[:k])), (ids, k)


def test_decode_with_offsets_of_byte_runs():
    """The byte tokens of one character start at it; in a run that is no UTF-8 (HF: one U+FFFD per
    byte, the ASCII ones too) each byte at its own U+FFFD."""
    tok = HfSentencePieceTokenizer.from_json(GENERIC_CASES["mistral-v1-llama-legacy"](), "legacy")
    ids = tok.encode("a é\U0010ffff")
    assert [tok.id_to_token(i) for i in ids][-4:] == ["<0xF4>", "<0x8F>", "<0xBF>", "<0xBF>"]
    assert tok.decode_with_offsets([1, *ids, 2]) == ("a é\U0010ffff", [0, 0, 1, 3, 3, 3, 3, 4])
    ids = [tok.token_to_id(p) for p in ("▁x", "<0x44>", "<0xB4>", "</s>", "<0xD2>", "▁y")]
    assert tok.decode_with_offsets(ids) == ("x\ufffd\ufffd\ufffd y", [0, 1, 2, 3, 3, 4])
