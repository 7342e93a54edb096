"""tokenizer.json added tokens with their flags (lstrip, rstrip, single_word, normalized), special or
not: ids and decoding identical to HF `tokenizers`, the oracle, on fixed texts, hypothesis texts
built from the tokens' pieces and white space, and RoBERTa / BART files written by transformers."""
import json

import pytest
from hypothesis import given, settings, strategies as st

import sqltok
from sqltok.added_tokens import SPACE, WORD, AddedTokenFlags, code_point_ranges
from sqltok.bpe.byte_unicode import bytes_to_unicode_str
from sqltok.bpe.hf_read import read_hf
from sqltok.bpe.tokenizer import pattern_id
from test_loaders import added, hf_json, split_then_byte_level  # noqa: E402

tokenizers = pytest.importorskip("tokenizers")

#: Tokens whose flags and overlaps hit HF's rules: a special lstrip token (RoBERTa's <mask>), rstrip,
#: single_word on a word that is also inside words, tokens that overlap ("ab" / "abc" / "bc"), a token
#: made of white space that both strips, and normalized ones, which match only in the text the others
#: leave ("k<" before "<mask>").
FLAGGED = [added("<|endoftext|>", 0, True), added("<mask>", 0, True, lstrip=True),
           added("<r>", 0, False, rstrip=True), added("ab", 0, False, single_word=True, normalized=True),
           added("abc", 0, False), added("bc", 0, False, normalized=True, lstrip=True),
           added(" x", 0, False, lstrip=True, rstrip=True), added("日", 0, False, normalized=True, single_word=True),
           added("k<", 0, False, normalized=True)]

PIECES = ["<mask>", "<r>", "ab", "abc", "bc", " x", "<|endoftext|>", " ", "  ", "\t", "\n", "\u2000", "\u00a0",
          "a", "b", "c", "x", "_", ".", "-", "é", "e\u0301", "\u0301", "1", "日", "本", "<", ">", "mask", "k"]

FIXED = ["hello <mask> world", "a  <mask>b", "<r>  x", "ab abc xab ab_ ab. _ab", "abcab ab", "q x y  x  z",
         " \t<mask>\t<r>\u2000a", "é<mask>ab", "ab", "", " ", "<mask><mask>  <mask>", "abc bc  bc", "x  xx x",
         "<r> x <r>\u00a0 x", "éé é e\u0301 é.", "日本 日 日. 本日", "k<mask> k<r k<<r>", "<|endoftext|> <mask>", "a<|endoftext|>ab"]


def tiny_vocab() -> tuple[dict[str, int], list[str]]:
    """The 256 byte tokens and a few merges (so that text between the added tokens merges too)."""
    vocab = {bytes_to_unicode_str(bytes([b])): b for b in range(256)}
    merges = []
    for a, b in [("a", "b"), ("ab", "c"), ("Ġ", "x"), ("Ġ", "a"), ("b", "c"), ("Ġa", "b")]:
        vocab[a + b] = len(vocab)
        merges.append(f"{a} {b}")
    return vocab, merges


#: A pattern the Cython pretokenizer does not know: pretokens from Python, added tokens from the encoder.
OTHER_PATTERN = r"\p{L}+|\s+|[^\s\p{L}]+"


def flagged_file(folder, **overrides):
    vocab, merges = tiny_vocab()
    entries = [dict(e, id=len(vocab) + n) for n, e in enumerate(FLAGGED)]
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(hf_json(vocab, merges, added_tokens=entries, **overrides), ensure_ascii=False),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    """(sqltok, HF) tokenizers of a tokenizer.json with the FLAGGED added tokens, and its path."""
    path = flagged_file(tmp_path_factory.mktemp("added"))
    with pytest.warns(UserWarning, match="HF gives it"):  # "ab", "abc", "bc" are vocabulary tokens
        tok = sqltok.Tokenizer.load(path)
    return tok, tokenizers.Tokenizer.from_file(str(path)), path


def check_like_hf(tok, hf, texts: list[str]) -> None:
    """Ids (the direct path and the Arrow path) and decoding equal HF's."""
    expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    for text, ids in zip(texts, expected):
        assert tok.encode(text, allowed_special="all") == ids, repr(text)
    assert tok.encode_batch(texts * (64 // max(len(texts), 1) + 1), allowed_special="all")[:len(texts)] == expected
    for ids in expected:
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


def test_flags_are_read(flagged):
    with pytest.warns(UserWarning):
        spec = read_hf(flagged[2])
    spec.validate()
    assert spec.added_flags == {"<mask>": AddedTokenFlags(lstrip=True), "<r>": AddedTokenFlags(rstrip=True),
                                "ab": AddedTokenFlags(single_word=True, normalized=True),
                                "bc": AddedTokenFlags(lstrip=True, normalized=True),
                                " x": AddedTokenFlags(lstrip=True, rstrip=True),
                                "日": AddedTokenFlags(single_word=True, normalized=True),
                                "k<": AddedTokenFlags(normalized=True)}
    assert AddedTokenFlags.from_hf({"content": "x", "special": False}).normalized  # HF's default
    assert not AddedTokenFlags.from_hf({"content": "x", "special": True}).normalized


def test_fixed_texts_encode_and_decode_like_hf(flagged):
    check_like_hf(*flagged[:2], FIXED)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_hypothesis_texts_encode_like_hf(flagged, text):
    tok, hf, _ = flagged
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


def test_special_tokens_keep_the_tiktoken_policy(flagged):
    """Without allowed_special, a special token's text (lstrip too) is text; added tokens still match."""
    tok = flagged[0]
    text = "a <mask> <r>  b"
    ids = tok.encode_ordinary(text)
    assert tok.special_tokens["<mask>"] not in ids and tok.token_to_id("<r>") in ids
    assert tok.decode(ids) == "a <mask> <r>b"  # <r> took in the white space after it


def test_python_pretokenized_patterns_match_added_tokens_like_hf(tmp_path):
    """A pattern sqltok splits with Python `regex` takes its added tokens from the same matcher."""
    assert pattern_id(OTHER_PATTERN) is None
    path = flagged_file(tmp_path, pre_tokenizer=split_then_byte_level(OTHER_PATTERN, "Isolated", False))
    with pytest.warns(UserWarning):
        tok = sqltok.Tokenizer.load(path)
    check_like_hf(tok, tokenizers.Tokenizer.from_file(str(path)), FIXED)


TEXT_PIECES = [p for p in PIECES if p not in ("<mask>", "<|endoftext|>")]  # (HF matches special tokens)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(TEXT_PIECES), max_size=14).map("".join))
def test_offsets_of_tokens_that_take_in_white_space_like_hf(flagged, text):
    """An added token's offsets are its match, the white space lstrip/rstrip take in included, as
    HF gives them (sqltok refused offsets for every text of a tokenizer with such tokens)."""
    tok, hf, _ = flagged
    want = hf.encode(text, add_special_tokens=False)
    assert tok.encode_with_offsets(text) == (want.ids, want.offsets)


def test_offsets_of_fixed_texts_like_hf(flagged, tmp_path):
    texts = [t for t in FIXED if "<mask>" not in t and "<|endoftext|>" not in t]
    path = flagged_file(tmp_path, pre_tokenizer=split_then_byte_level(OTHER_PATTERN, "Isolated", False))
    with pytest.warns(UserWarning):
        python_split = sqltok.Tokenizer.load(path)
    for tok, hf in [flagged[:2], (python_split, tokenizers.Tokenizer.from_file(str(path)))]:
        for text in texts:
            want = hf.encode(text, add_special_tokens=False)
            assert tok.encode_with_offsets(text) == (want.ids, want.offsets), repr(text)


def test_unicode_classes_are_rust_regexs():
    """`\\w` and `\\s` as HF's Rust regex has them: combining marks and connector punctuation are word
    characters, U+2000 and NBSP white space, U+200B (a format character) neither."""
    word, space = code_point_ranges(WORD), code_point_ranges(SPACE)

    def within(ranges, c):
        return any(lo <= ord(c) <= hi for lo, hi in zip(ranges[::2], ranges[1::2]))
    assert all(within(word, c) for c in "aZ_\u0301\u203f5\u0663日\u200d")
    assert not any(within(word, c) for c in " .-\u200b\u2000")
    assert all(within(space, c) for c in " \t\n\u2000\u00a0\u3000\u0085")
    assert not any(within(space, c) for c in "a\u200b\u001c")


@pytest.fixture(scope="module")
def nfc(tmp_path_factory):
    """(sqltok, HF) tokenizers under the NFC normalizer with normalized tokens whose text is not NFC."""
    vocab, merges = tiny_vocab()
    entries = [added("e\u0301x", len(vocab), False, normalized=True), added("<s>", len(vocab) + 1, True),
               added("A\u030a", len(vocab) + 2, False, normalized=True, lstrip=True)]
    path = tmp_path_factory.mktemp("nfc") / "tokenizer.json"
    path.write_text(json.dumps(hf_json(vocab, merges, normalizer={"type": "NFC"}, added_tokens=entries),
                               ensure_ascii=False), encoding="utf-8")
    return sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["e", "\u0301", "\u00e9", "x", " ", "A", "\u030a", "\u00c5", "\u212b", "<s>", "s"]),
                max_size=12).map("".join))
def test_normalized_tokens_match_in_nfc_like_hf(nfc, text):
    tok, hf = nfc
    want = hf.encode(text, add_special_tokens=False)
    assert tok.encode(text, allowed_special="all") == want.ids
    if "<s>" not in text:  # (offsets: special-token text is text)
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets)


def test_offsets_of_a_normalized_token_whose_text_nfc_changes(tmp_path):
    """A `normalized` added token under NFC matches its content in NFC ("éx" for "e\u0301x"): its
    offsets are that match, as HF's (encode_with_offsets raised "the tokens do not cover the text's
    bytes": it laid the token's own bytes, one more, over the text)."""
    vocab, merges = tiny_vocab()
    entries = [added("e\u0301x", len(vocab), False, normalized=True), added("<s>", len(vocab) + 1, True)]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_json(vocab, merges, normalizer={"type": "NFC"}, added_tokens=entries),
                               ensure_ascii=False), encoding="utf-8")
    tok, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    for text in ["a e\u0301x b", "\u00e9x", "e\u0301xe\u0301x \u00e9", "xx", ""]:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets), repr(text)
    assert tok.encode_with_offsets("a \u00e9x").offsets == [(0, 1), (1, 2), (2, 4)]


@pytest.mark.parametrize("converter", ["RobertaTokenizerFast", "BartTokenizerFast"])
def test_roberta_and_bart_files_encode_like_hf(bundled, gpt2_files, tmp_path, converter):
    """RoBERTa's and BART's <mask> (lstrip true) in the files transformers writes, on GPT-2's files."""
    transformers = pytest.importorskip("transformers")
    cls = getattr(transformers, converter)
    fast = cls(vocab=str(gpt2_files[0]), merges=str(gpt2_files[1]),
               mask_token=transformers.AddedToken("<mask>", lstrip=True, rstrip=False))
    path = tmp_path / "tokenizer.json"
    fast.backend_tokenizer.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert len(doc["model"]["vocab"]) == 50257
    assert {t["content"]: t["lstrip"] for t in doc["added_tokens"]}["<mask>"] is True
    assert doc["post_processor"]["type"] == "RobertaProcessing"
    tok, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    check_like_hf(tok, hf, FIXED + ["The capital of France is <mask>.", "Hello<mask>!  <mask>\n<mask>",
                                    "<s>A</s> <pad><unk>  <mask> x"])


@pytest.fixture(scope="module")
def gpt2_files(bundled):
    return bundled("gpt2_vocab.json"), bundled("gpt2_merges.txt")


@pytest.mark.parametrize("flags", [{"lstrip": True}, {"single_word": True, "rstrip": True}, {"normalized": True}])
def test_wordpiece_flagged_specials_like_hf(bundled, tmp_path, flags):
    """(Once refused by name: tests/test_wordpiece_added_tokens.py has the rest.)"""
    doc = json.loads(bundled("bert-base-uncased_tokenizer.json").read_text(encoding="utf-8"))
    doc["padding"] = doc["truncation"] = None
    mask = next(t for t in doc["added_tokens"] if t["content"] == "[MASK]")
    mask.update(flags)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tok, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    texts = ["a [MASK] b", "a[MASK]b", "x  [MASK]  y [mask]", "[MASK][MASK]"]
    assert [tok.encode(t, allowed_special="all") for t in texts] == [e.ids for e in hf.encode_batch(texts)]
