"""The one-call single-text paths give what the generic path gives: WordPiece `encode` under every
special-token policy (the encoder's own look for special-token text, with special tokens that start
with one byte and with several), and `decode` under every `errors` policy, strict's error included."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqltok
from sqltok import Tokenizer
from sqltok.wordpiece.tokenizer import WordPieceTokenizer

FRAGMENTS = st.sampled_from(["[CLS]", "[SEP]", "[MASK]", "[", "[CLS", "SEP]", "<s>", "</s>", "<s", "<", " ",
                             "hello", "World", "naïve", "日本", "!", "'s", "[[SEP]]", "\ud800"])
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=4)), max_size=12).map("".join)
POLICIES = [((), "all"), ("all", "all"), ((), ()), ("all", ()), ({"[SEP]"}, "all"), ((), {"[CLS]"}),
            ("all", {"[CLS]"})]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", params=["bert", "two-first-bytes"])
def wordpiece(request, bundled, tmp_path_factory) -> WordPieceTokenizer:
    bert = Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))
    if request.param == "bert":  # special tokens that all start with "["
        return bert
    # a vocab.txt whose [CLS] and [SEP] are "<s>" and "</s>": special tokens that start with "[" or "<"
    vocab = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    vocab.write_text("\n".join(bert.spec.tokens + ["<s>", "</s>"]) + "\n", encoding="utf-8")
    tok = WordPieceTokenizer.load(vocab, cls_token="<s>", sep_token="</s>")
    assert {"<s>", "</s>", "[SEP]"} <= tok.special_tokens_set
    return tok


@pytest.fixture(scope="module")
def o200k(bundled) -> Tokenizer:
    return Tokenizer.load(bundled("o200k_base.tiktoken"))


def outcome(call):
    """What a call gives: its result, or the type and message of what it raised."""
    try:
        return call()
    except (ValueError, sqltok.SqltokError) as e:
        return type(e), str(e)


@SETTINGS
@given(text=TEXT)
def test_wordpiece_encode_equals_the_generic_path(wordpiece, text):
    for allowed, disallowed in POLICIES:
        got = outcome(lambda: wordpiece.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        expected = outcome(lambda: Tokenizer.encode(wordpiece, text, allowed_special=allowed,
                                                    disallowed_special=disallowed))
        assert got == expected, (allowed, disallowed)


def test_wordpiece_encode_matches_special_text_anywhere(wordpiece):
    cls, sep = wordpiece.spec.single[0][0], wordpiece.spec.single[1][0]
    word = wordpiece.encode("hello", disallowed_special=())
    for special in sorted(wordpiece.special_tokens_set):
        sid = wordpiece.special_tokens[special]
        for text, inner in ((special, [sid]), ("hello" + special, word[1:-1] + [sid]),
                            (special + "hello", [sid] + word[1:-1])):
            assert wordpiece.encode(text, allowed_special="all") == [cls, *inner, sep], text
            with pytest.raises(ValueError, match="disallowed special token"):
                wordpiece.encode(text)
    assert wordpiece.encode("[" * 50 + "<" * 50, allowed_special="all") == \
        wordpiece.encode("[" * 50 + "<" * 50, disallowed_special=())


def test_wordpiece_encode_long_texts_and_nested_special_tokens(bundled, tmp_path):
    """Texts of 4 KB and more (encoded without the GIL) and special tokens one of which starts another
    ("<s>", "<s>>": the longest is matched): `encode` gives what the generic path gives."""
    bert = Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(bert.spec.tokens + ["<s>", "<s>>"]) + "\n", encoding="utf-8")
    nested = WordPieceTokenizer.load(vocab, cls_token="<s>", sep_token="<s>>")
    assert {"<s>", "<s>>"} <= nested.special_tokens_set
    pick = random.Random(15)
    parts = ["[CLS]", "[SEP]", "[MASK]", "[", "<s>", "<s>>", "<s>>>", "<", " ", "hello", "World", "naïve", "日本", "!"]
    texts = ["".join(pick.choices(parts, k=k)) for k in (3, 40, 2000, 2000)]
    assert len(texts[-1].encode()) >= 4096
    for tok in (bert, nested):
        for text in texts:
            for allowed, disallowed in POLICIES:
                got = outcome(lambda: tok.encode(text, allowed_special=allowed, disallowed_special=disallowed))
                expected = outcome(lambda: Tokenizer.encode(tok, text, allowed_special=allowed,
                                                            disallowed_special=disallowed))
                assert got == expected, (text[:40], allowed, disallowed)


BYTES = st.binary(max_size=30)  # byte-level tokens spell any bytes, valid UTF-8 or not
ERRORS = ["strict", "replace", "ignore", "backslashreplace", "surrogateescape", "surrogatepass"]


@SETTINGS
@given(data=BYTES, text=TEXT)
def test_bpe_decode_equals_bytes_decode_under_every_errors_policy(o200k, data, text):
    tok = o200k
    ids = [tok.encode_single_token(bytes([b])) for b in data] + tok.encode_ordinary(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
    raw = tok.decode_bytes(ids)
    for errors in ERRORS:
        assert outcome_decode(lambda: tok.decode(ids, errors)) == outcome_decode(lambda: raw.decode("utf-8", errors))
    assert tok.decode(ids) == raw.decode("utf-8", "replace")


def test_decode_errors_policy_is_checked_as_bytes_decode_checks_it(o200k):
    tok = o200k
    h, ff = tok.encode_single_token(b"H"), tok.encode_single_token(b"\xff")
    with pytest.raises(TypeError):
        tok.decode([h], None)
    with pytest.raises(LookupError):
        tok.decode([ff], "no-such-handler")
    assert tok.decode([h], "no-such-handler") == "H"  # (looked up only when needed, as bytes.decode)
    with pytest.raises(UnicodeDecodeError) as got:
        tok.decode([h, ff, h], "strict")
    with pytest.raises(UnicodeDecodeError) as expected:
        b"H\xffH".decode("utf-8", "strict")
    assert str(got.value) == str(expected.value)


@SETTINGS
@given(text=TEXT, noise=st.lists(st.integers(0, 30521), max_size=6))
def test_wordpiece_decode_equals_the_generic_path(wordpiece, text, noise):
    ids = wordpiece.encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"),
                           disallowed_special=()) + noise
    for errors in ("replace", "strict"):
        assert wordpiece.decode(ids, errors) == Tokenizer.decode(wordpiece, ids, errors)


def outcome_decode(call):
    """What a decode gives: its text, or the message of its UnicodeDecodeError."""
    try:
        return call()
    except UnicodeDecodeError as e:
        return str(e)


SPECIAL_TEXT = st.lists(st.sampled_from(["<|endoftext|>", "<|endofprompt|>", "<|endof", "|>", "hello", " ", "é",
                                         "\ud800"]), max_size=6).map("".join)
# tiktoken's policies, each twice: hashable ones are kept per policy, sets and lists are not
POLICIES_TT = [(frozenset(), "all"), ("all", "all"), ({"<|endoftext|>"}, "all"), (frozenset({"<|endofprompt|>"}), "all"),
               (set(), ()), (frozenset(), ["<|endofprompt|>"]), (frozenset(), {"<|endoftext|>"}),
               ("all", frozenset({"<|endoftext|>"}))] * 2


def raised(call):
    """A call's result, or the type of what it raised (tiktoken words its messages otherwise)."""
    try:
        return call()
    except ValueError as e:
        return type(e)


@pytest.fixture(scope="module")
def o200k_pair(bundled):
    pytest.importorskip("tiktoken")
    from conftest import tiktoken_pair

    return tiktoken_pair(bundled("o200k_base.tiktoken"))


@SETTINGS
@given(text=SPECIAL_TEXT)
def test_bpe_encode_checks_special_text_as_tiktoken_under_every_policy(o200k_pair, text):
    """The check of disallowed special-token text, kept per policy, raises where tiktoken raises and
    the ids equal tiktoken's everywhere else, with the policies in turn on one tokenizer."""
    tok, ref = o200k_pair
    for allowed, disallowed in POLICIES_TT:
        got = raised(lambda: tok.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        expected = raised(lambda: ref.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        assert got == expected, (allowed, disallowed)
        assert raised(lambda: tok.encode_batch([text, "x"], allowed_special=allowed,
                                               disallowed_special=disallowed)) == \
            raised(lambda: ref.encode_batch([text, "x"], allowed_special=allowed, disallowed_special=disallowed))
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    assert tok.token_count(text) == len(ref.encode_ordinary(text))


def test_bpe_single_calls_refuse_what_is_not_a_str(o200k):
    for call in (o200k.encode_ordinary, o200k.token_count, o200k.encode):
        for bad in (b"bytes", None, 5, ["a"]):
            with pytest.raises(TypeError, match="text must be str"):
                call(bad)


@pytest.mark.parametrize("file", ["o200k_base.tiktoken", "bert-base-uncased_tokenizer.json",
                                  "botchan_en_bpe_1000.model"])
def test_str_subclasses_are_text(bundled, file):
    """A str subclass is a str (tiktoken takes numpy.str_, what iterating a numpy array of texts
    gives): the encoders, which take exactly str, get a copy (they raised TypeError, but only for
    single texts and batches of fewer than 64; one overriding __str__ is read as its characters)."""
    import numpy as np

    class Text(str):
        def __str__(self):
            return "not the text"

    tok = Tokenizer.load(bundled(file))
    text = "Hello wörld <|endoftext|> [SEP]"
    calls = [tok.encode_ordinary, tok.token_count, tok.tokens, tok.encode_with_offsets,
             lambda t: tok.encode(t, disallowed_special=()), lambda t: tok.encode(t, allowed_special="all"),
             lambda t: tok.encode_batch([t, t], disallowed_special=()), lambda t: tok.encode_ordinary_batch([t] * 70),
             lambda t: tok.encode_to_numpy(t, disallowed_special=()).tolist()]
    for call in calls:
        want = call(text)
        assert call(np.str_(text)) == want
        assert call(Text(text)) == want
