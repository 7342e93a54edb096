"""WordPiece tokenizer.json (BERT-like) files with HF's added tokens, special or not, in the vocabulary
or after it, with their flags (lstrip, rstrip, single_word, normalized): ids (the direct path and the
Arrow path) and decoding identical to HF `tokenizers`, on fixed texts and hypothesis texts built from
the tokens' pieces, with and without a normalizer."""
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import sqltok
from sqltok.formats.errors import UnsupportedTokenizerError

tokenizers = pytest.importorskip("tokenizers")
AddedToken = tokenizers.AddedToken

#: normalized ones ("NewWord" matches "newword" after lowercasing, "Café" after accents are
#: stripped), raw ones (case kept), one of the vocabulary ("hello": single_word), stripping ones,
#: overlapping ones ("ab" / "abc"), a special one that takes in the white space after it.
ADDED = [AddedToken("NewWord", normalized=True), AddedToken("Foo-Bar", normalized=False),
         AddedToken("hello", single_word=True, normalized=False), AddedToken("[X]", lstrip=True, rstrip=True,
                                                                            normalized=False),
         AddedToken("ab", normalized=False), AddedToken("abc", normalized=True, single_word=True),
         AddedToken("Café", normalized=True, lstrip=True)]
SPECIAL = [AddedToken("<sp>", rstrip=True, normalized=False, special=True)]

PIECES = ["NewWord", "newword", "NEWWORD", "Foo-Bar", "foo-bar", "hello", "Hello", "[X]", "[x]", "ab", "abc",
          "ABC", "Café", "cafe", "CAFÉ", "<sp>", "[CLS]", "[MASK]", " ", "  ", "\t", "\n", "\u00a0", "\u3000",
          "x", "-", ",", "é", "e\u0301", "\u0301", "İ", "日", "1", "\x00"]

FIXED = ["NewWord foo-bar Foo-Bar xhello hello, a  [X]  b <sp>  c", "İstanbul NEWWORDs", "", " ",
         "café [X][X] <sp>", "abcab abc xabc ab_ ABC", "hello hellohello hello.", "  Café  cafe CAFÉ",
         "[CLS] a [MASK] <sp>[SEP]", "日本abc日", "e\u0301 [X]\u3000[X]\n"]


def _file(bert: Path, folder: Path, lowercase: bool = True, normalizer: bool = True) -> Path:
    """bert-base-uncased's tokenizer.json with the ADDED and SPECIAL tokens (its normalizer cased, or none)."""
    hf = tokenizers.Tokenizer.from_file(str(bert))
    hf.no_padding()
    hf.no_truncation()
    if not normalizer:
        hf.normalizer = None
    elif not lowercase:
        hf.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=False)
    hf.add_tokens(ADDED)
    hf.add_special_tokens(SPECIAL)
    path = folder / "tokenizer.json"
    path.write_text(hf.to_str(), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=["uncased", "cased", "no-normalizer"])
def pair(request, bundled, tmp_path_factory):
    path = _file(bundled("bert-base-uncased_tokenizer.json"), tmp_path_factory.mktemp(request.param),
                 request.param == "uncased",
                 request.param != "no-normalizer")
    return sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))


def check_like_hf(tok, hf, texts: list[str]) -> None:
    expected = [e.ids for e in hf.encode_batch(texts)]
    for text, ids in zip(texts, expected):
        assert tok.encode(text, allowed_special="all") == ids, repr(text)
    assert tok.encode_batch(texts * (64 // max(len(texts), 1) + 1), allowed_special="all")[:len(texts)] == expected
    arrow = tok.encode_arrow(pa.array(texts + [None]), "all")
    assert arrow.to_pylist() == expected + [None]
    assert tok.encode_arrow(pa.array(texts), "all", counts_only=True).to_pylist() == [len(x) for x in expected]
    for ids in expected:
        assert tok.decode(ids) == hf.decode(ids)


def test_fixed_texts(pair):
    check_like_hf(*pair, FIXED)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), min_size=1, max_size=4))
def test_hypothesis_texts(bundled, tmp_path_factory, texts):
    for tok, hf in _pairs(bundled, tmp_path_factory):
        check_like_hf(tok, hf, texts)


_PAIRS: list = []


def _pairs(bundled, factory):
    """The three tokenizers once for all hypothesis examples."""
    if not _PAIRS:
        for lowercase, normalizer in ((True, True), (False, True), (True, False)):
            path = _file(bundled("bert-base-uncased_tokenizer.json"), factory.mktemp("hyp"), lowercase, normalizer)
            _PAIRS.append((sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))))
    return _PAIRS


def test_special_text_is_text_unless_allowed(pair):
    """sqltok's `encode` keeps tiktoken's policy for special tokens; non-special added tokens are
    matched always, as HF does."""
    tok, hf = pair
    text = "a <sp> NewWord"
    hf.encode_special_tokens = True  # HF's special tokens as text
    try:
        assert tok.encode(text, disallowed_special=()) == hf.encode(text).ids
    finally:
        hf.encode_special_tokens = False
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)


def test_vocabularies_and_ids_after_the_model(pair):
    tok, hf = pair
    model, added = tok.vocabularies()
    assert len(model) == 30522 and "NewWord" not in model
    assert {t: hf.token_to_id(t) for t in ("NewWord", "Foo-Bar", "<sp>", "hello")} == \
        {t: added.get(t, model.get(t)) for t in ("NewWord", "Foo-Bar", "<sp>", "hello")}
    assert tok.n_vocab == hf.get_vocab_size(with_added_tokens=True)


def test_offsets_and_pairs_refused_by_name(pair):
    tok, _ = pair
    with pytest.raises(UnsupportedTokenizerError, match="non-special added tokens"):
        tok.encode_with_offsets("hello NewWord")
    with pytest.raises(UnsupportedTokenizerError, match="pairs"):
        tok.encode_pair("a", "b")


def test_file_ids_are_hfs(bundled, tmp_path):
    """HF numbers added tokens after the vocabulary whatever the file says (and warns); so does sqltok."""
    doc = json.loads(_file(bundled("bert-base-uncased_tokenizer.json"), tmp_path).read_text(encoding="utf-8"))
    doc["added_tokens"][-1]["id"] += 5
    path = tmp_path / "shifted.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.warns(UserWarning, match="HF gives it"):
        tok = sqltok.Tokenizer.load(path)
    assert tok.encode("<sp>", allowed_special="all") == tokenizers.Tokenizer.from_file(str(path)).encode("<sp>").ids
