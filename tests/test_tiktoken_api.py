"""tiktoken's whole `Encoding` API on sqltok's tokenizers, checked against tiktoken itself on the
r50k, cl100k and o200k files: values, and the exceptions tiktoken raises."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqltok

from conftest import tiktoken_pair

tiktoken = pytest.importorskip("tiktoken")

FILES = ["r50k_base.tiktoken", "cl100k_base.tiktoken", "o200k_base.tiktoken"]
CORPUS = Path(__file__).parent / "data" / "corpora_sample.jsonl"
EDGE = ["", " ", "hello world", "Hello  World!!\n\n", "it's 'S don't", "日本語のテキスト", "Ünïcödé ﬁ Å",
        "🙂👍🏽 €uro 𝄞", "def f(x):\n\treturn x ** 2  # c\r\n", "a" * 300, "<|endoftext|> as text"]


def texts() -> list[str]:
    docs = [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    return docs[::4] + EDGE


@pytest.fixture(scope="module", params=FILES)
def pair(request, bundled):
    """(sqltok BPETokenizer, tiktoken Encoding) of one bundled `.tiktoken` file."""
    return tiktoken_pair(bundled(request.param))


def test_attributes_equal_tiktoken(pair):
    tok, ref = pair
    assert (tok.name, tok.n_vocab, tok.max_token_value, tok.eot_token) == \
        (ref.name, ref.n_vocab, ref.max_token_value, ref.eot_token)
    assert tok.special_tokens_set == ref.special_tokens_set
    ids = [*ref._special_token_values, 0, 1000, ref.n_vocab - 1, ref.n_vocab]
    assert [tok.is_special_token(i) for i in ids] == [ref.is_special_token(i) for i in ids]
    with pytest.raises(TypeError):
        tok.is_special_token("<|endoftext|>")
    assert tok.token_byte_values() == ref.token_byte_values()


def test_single_tokens_equal_tiktoken(pair):
    tok, ref = pair
    ids = [*range(0, len(ref._mergeable_ranks), 97), *ref._special_token_values]
    got = [tok.decode_single_token_bytes(i) for i in ids]
    assert got == [ref.decode_single_token_bytes(i) for i in ids]
    assert [tok.encode_single_token(b) for b in got] == [ref.encode_single_token(b) for b in got] == ids
    assert tok.encode_single_token("<|endoftext|>") == ref.encode_single_token("<|endoftext|>")
    assert tok.decode_tokens_bytes(ids[:50]) == ref.decode_tokens_bytes(ids[:50])
    for bad in (b"no such token \xff", "no such token"):
        with pytest.raises(KeyError):
            ref.encode_single_token(bad)
        with pytest.raises(KeyError):
            tok.encode_single_token(bad)
    with pytest.raises(TypeError):
        tok.encode_single_token(5)
    unused_ids = [i for i in range(len(ref._mergeable_ranks), ref.n_vocab) if i not in ref._special_token_values]
    for unused in (*unused_ids[:3], ref.n_vocab, ref.n_vocab + 1000):
        with pytest.raises(KeyError):
            ref.decode_single_token_bytes(unused)
        with pytest.raises(KeyError):
            tok.decode_single_token_bytes(unused)
        with pytest.raises(KeyError):
            tok.decode_batch([[1], [unused]])
        with pytest.raises(KeyError):
            tok.decode([unused])


def test_ids_that_are_not_integers_are_refused_as_tiktoken_refuses_them(pair, bundled):
    """A float, a numpy float or bool is no token id (tiktoken: TypeError), in every family; Cython's
    int32_t would truncate 2.5 to 2 and give that token's bytes. numpy integers are ids."""
    tok, ref = pair
    others = [sqltok.Tokenizer.load(bundled(f))
              for f in ("bert-base-uncased_tokenizer.json", "botchan_en_bpe_1000.model")]
    for bad in (2.5, 2.0, np.float64(3.0), np.bool_(True)):
        with pytest.raises(TypeError):
            ref.decode_single_token_bytes(bad)
        for enc in (tok, *others):
            with pytest.raises(TypeError):
                enc.decode_single_token_bytes(bad)
            with pytest.raises(TypeError):
                enc.decode_tokens_bytes([1, bad])
            with pytest.raises(TypeError):
                enc.decode_with_offsets([bad])
    assert tok.decode_single_token_bytes(np.int64(3)) == ref.decode_single_token_bytes(np.int64(3))


DECODE_CALLS = {
    "decode": lambda enc, ids: enc.decode(ids), "decode_bytes": lambda enc, ids: enc.decode_bytes(ids),
    "decode_tokens_bytes": lambda enc, ids: enc.decode_tokens_bytes(ids),
    "decode_single_token_bytes": lambda enc, ids: [enc.decode_single_token_bytes(i) for i in ids],
    "decode_batch": lambda enc, ids: enc.decode_batch([[0], ids]),
    "decode_bytes_batch": lambda enc, ids: enc.decode_bytes_batch([[0], ids]),
    "decode_with_offsets": lambda enc, ids: enc.decode_with_offsets(ids),
}
# ids tiktoken refuses with KeyError (past the vocabulary, u32 all the same) and OverflowError (no u32),
# alone, in rows (a row's ids are all converted first, except in the calls that go id by id) and in
# batches (the first row that fails)
BAD_IDS = [[300_000], [2**31], [2**32 - 1], [-1], [-(2**31) - 1], [2**32], [2**64], [0, -1], [300_000, -1],
           [-1, 300_000], [2**31, -(2**40)], [2**31] * 70 + [2**32], [1] * 70 + [-1], [1] * 70 + [2**31]]


def _error_type(call, enc, ids) -> type[Exception] | None:
    try:
        call(enc, ids)
    except (KeyError, OverflowError, TypeError) as e:
        return KeyError if isinstance(e, KeyError) else type(e)
    return None


def test_ids_without_a_token_raise_what_tiktoken_raises(pair, bundled):
    """KeyError (UnknownTokenError) for an id in 0..2**32-1 that is no token, OverflowError for one no
    u32 holds, in every decoding call, as tiktoken's (sqltok gave UnknownTokenError for -1 and 2**32,
    OverflowError for 2**31); the other families raise the same. Messages name the id."""
    tok, ref = pair
    others = [sqltok.Tokenizer.load(bundled(f))
              for f in ("bert-base-uncased_tokenizer.json", "botchan_en_bpe_1000.model")]
    for name, call in DECODE_CALLS.items():
        for ids in BAD_IDS:
            want = _error_type(call, ref, ids)
            assert want in (KeyError, OverflowError), (name, ids)
            one_bad = sum(not 0 <= i < 300_000 for i in ids) == 1  # (the others' decode_with_offsets decode first)
            for enc in (tok, *others) if one_bad or name != "decode_with_offsets" else (tok,):
                assert _error_type(call, enc, ids) is want, (name, ids, enc)
        for rows in ([[300_000], [-1]], [[-1], [300_000]], [[300_000], [2**32]], [[2**31], [2.5]]):
            for batch_call in ("decode_batch", "decode_bytes_batch"):
                want = _error_type(lambda enc, _: getattr(enc, batch_call)(rows), ref, None)
                for enc in (tok, *others):
                    assert _error_type(lambda enc, _: getattr(enc, batch_call)(rows), enc, None) is want
    with pytest.raises(OverflowError, match="token id -1 is out of range"):
        tok.decode([5, -1])
    with pytest.raises(KeyError, match=f"token id {2**31} is not in this vocabulary"):
        tok.decode_single_token_bytes(2**31)


def test_int64_id_lists_decode_as_int32_ones_with_tiktokens_errors(pair, bundled):
    """int64 id lists (what SQL's BIGINT[] and numpy give) are decoded as they are read: the same text
    as int32 lists, and a row's id outside 0..2**32-1 is an OverflowError even after an id that is no
    token, as tiktoken converts a row before it decodes it."""
    tok, ref = pair
    bert = sqltok.Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))
    for enc in (tok, bert):
        rows = [[71, 13, 1], None, [], [5, 6]]
        want = enc.decode_arrow(pa.array(rows, pa.list_(pa.int32()))).to_pylist()
        for t in (pa.int64(), pa.uint32(), pa.int16()):
            assert enc.decode_arrow(pa.array(rows, pa.large_list(t))).to_pylist() == want
    for row, error in (([300_000, 2**32], OverflowError), ([300_000, -1], OverflowError), ([1, 300_000], KeyError)):
        with pytest.raises(error):
            ref.decode(row)
        with pytest.raises(error):
            tok.decode_arrow(pa.array([[1], row], pa.list_(pa.int64())))


def test_id_containers_are_taken_as_tiktoken_takes_them(pair, bundled):
    """decode and decode_bytes take a sequence (list, tuple, range, numpy array) and refuse a set, a
    dict or a generator, as tiktoken (sqltok decoded a set in its own order, a dict's keys);
    decode_tokens_bytes and decode_with_offsets take any iterable, in every family (WordPiece's
    decode_with_offsets gave no offsets for a generator, HF-SentencePiece's a TypeError)."""
    tok, ref = pair
    others = [sqltok.Tokenizer.load(bundled(f))
              for f in ("bert-base-uncased_tokenizer.json", "botchan_en_bpe_1000.model")]
    ids = [71, 13, 1]
    for enc in (tok, *others):
        for decode in (enc.decode, enc.decode_bytes):
            want = decode(ids)
            assert decode(tuple(ids)) == decode(np.array(ids, np.uint32)) == want
            assert decode(range(3)) == decode([0, 1, 2])
            for bad in ({71}, {71: 1}, (i for i in ids)):
                with pytest.raises(TypeError):
                    ref.decode(bad)
                with pytest.raises(TypeError):
                    decode(bad)
        assert enc.decode_tokens_bytes(i for i in ids) == enc.decode_tokens_bytes(ids)
        assert enc.decode_with_offsets(i for i in ids) == enc.decode_with_offsets(ids)
    assert tok.decode_with_offsets(i for i in ids) == ref.decode_with_offsets(i for i in ids)


def test_batches_and_numpy_equal_tiktoken(pair):
    tok, ref = pair
    batch = [ref.encode_ordinary(t) for t in texts()]
    batch.append([ref.encode_single_token(b"\xe2")])  # part of a character: U+FFFD in text, exact in bytes
    assert tok.decode_batch(batch) == ref.decode_batch(batch)
    assert tok.decode_batch(batch, errors="ignore") == ref.decode_batch(batch, errors="ignore")
    assert tok.decode_bytes_batch(batch) == ref.decode_bytes_batch(batch)
    with pytest.raises(ValueError):
        tok.decode_batch(batch, errors="strict")
    with pytest.raises(TypeError):
        tok.decode_batch([[1, 2.5]])
    for text in texts():
        got, want = tok.encode_to_numpy(text, disallowed_special=()), ref.encode_to_numpy(text, disallowed_special=())
        assert got.dtype == want.dtype == np.uint32 and np.array_equal(got, want)
    assert np.array_equal(tok.encode_to_numpy("<|endoftext|>", allowed_special="all"),
                          ref.encode_to_numpy("<|endoftext|>", allowed_special="all"))
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode_to_numpy("<|endoftext|>")


def test_decode_batch_under_every_errors_policy_equals_tiktoken(pair):
    """Rows that are not UTF-8 decode as tiktoken's decode_batch decodes them: "strict" raises its
    UnicodeDecodeError (sqltok: a ValueError of its own), "surrogateescape" gives lone surrogates
    (sqltok: UnicodeEncodeError on the way through Arrow)."""
    tok, ref = pair
    part = ref.encode_single_token(b"\xe2")
    batch = [ref.encode_ordinary("hello"), [part], [part, *ref.encode_ordinary(" x")], []]
    for errors in ("strict", "replace", "ignore", "backslashreplace", "surrogateescape", "surrogatepass"):
        try:
            want = ref.decode_batch(batch, errors=errors)
        except UnicodeDecodeError as e:
            with pytest.raises(UnicodeDecodeError) as got:
                tok.decode_batch(batch, errors=errors)
            assert str(got.value) == str(e)
        else:
            assert tok.decode_batch(batch, errors=errors) == want
        assert tok.decode_batch(batch[:1], errors=errors) == ref.decode_batch(batch[:1], errors=errors)


def test_batches_refuse_none_rows_and_ids_as_tiktoken(pair):
    """None is no id list and no id: TypeError in tiktoken's decode_batch and decode_bytes_batch
    (sqltok decoded a None row after the first as None, and a None id was a ValueError)."""
    tok, ref = pair
    for batch in ([[1], None], [None], [[1, None]], [[2, 3]] * 70 + [[1] * 70 + [None]]):
        for enc in (ref, tok):
            with pytest.raises(TypeError):
                enc.decode_batch(batch)
            with pytest.raises(TypeError):
                enc.decode_bytes_batch(batch)


@pytest.mark.parametrize("allowed, disallowed", [({"<|nope|>"}, "all"), ({"<|nope|>"}, ()),
                                                 (frozenset({"<|nope|>", "<|endoftext|>"}), "all"),
                                                 ({"<|nope|>", "<|endoftext|>"}, ())])
def test_allowed_special_names_the_encoding_lacks_allow_nothing(pair, allowed, disallowed):
    """One allowed_special set serves several encodings in tiktoken: a name that is no special token
    of this one is ignored (sqltok refused the call); a str other than "all" is a TypeError in both
    (not a set of its characters)."""
    tok, ref = pair
    texts = ["hello", "hello <|endoftext|>", "<|nope|> x", "<|endoftext|><|endoftext|>"] * 20  # (64+: Arrow)
    for text in texts[:4]:
        policy = {"allowed_special": allowed, "disallowed_special": disallowed}
        for call in (lambda e: e.encode(text, **policy), lambda e: e.encode_to_numpy(text, **policy).tolist()):
            try:
                want = call(ref)
            except ValueError:
                with pytest.raises(ValueError, match="disallowed special token"):
                    call(tok)
            else:
                assert call(tok) == want
    if disallowed == ():
        for batch in (texts[:4], texts):
            assert tok.encode_batch(batch, allowed_special=allowed, disallowed_special=()) == \
                ref.encode_batch(batch, allowed_special=allowed, disallowed_special=())
    for text in ("hello", "<|endoftext|>", "<|endoftext|><|fim_prefix|>"):
        with pytest.raises(TypeError):
            ref.encode(text, allowed_special="<|endoftext|>", disallowed_special=disallowed)
        with pytest.raises(TypeError):
            tok.encode(text, allowed_special="<|endoftext|>", disallowed_special=disallowed)


def test_no_disallowed_special_check_when_it_is_empty(pair):
    """tiktoken checks for disallowed special-token text only `if disallowed_special:`, so None (or
    False) turns the check off in encode, encode_to_numpy and encode_with_unstable alike (sqltok's
    last two raised TypeError: 'NoneType' object is not iterable)."""
    tok, ref = pair
    for empty in (None, False, (), frozenset()):
        text = "hi <|endoftext|>"
        assert tok.encode(text, disallowed_special=empty) == ref.encode(text, disallowed_special=empty)
        assert np.array_equal(tok.encode_to_numpy(text, disallowed_special=empty),
                              ref.encode_to_numpy(text, disallowed_special=empty))
        assert _unstable(tok, text, disallowed_special=empty) == _unstable(ref, text, disallowed_special=empty)


def test_decode_skip_special_tokens(pair):
    """tiktoken never skips special tokens (sqltok's default); skip_special_tokens=True drops their ids."""
    tok, enc = pair
    special = enc.eot_token
    ids = [special, *enc.encode_ordinary("hello world"), special, *enc.encode_ordinary(" bye")]
    assert tok.decode(ids) == tok.decode(ids, skip_special_tokens=False) == enc.decode(ids)
    plain = [i for i in ids if i != special]
    assert tok.decode(ids, skip_special_tokens=True) == enc.decode(plain)
    assert tok.decode_batch([ids, [special], []], skip_special_tokens=True) == [enc.decode(plain), "", ""]
    assert tok.decode_batch([ids, [special]]) == [enc.decode(ids), enc.decode([special])]


def test_decode_with_offsets_equals_tiktoken(pair):
    tok, ref = pair
    for text in texts():
        ids = ref.encode_ordinary(text)
        assert tok.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    part = [ref.encode_single_token(b"\xe2")]
    with pytest.raises(UnicodeDecodeError):
        ref.decode_with_offsets(part)
    with pytest.raises(UnicodeDecodeError):
        tok.decode_with_offsets(part)


UNSTABLE = ["hello fanta", "hello wor", "x = 1\n\n", "日本", "€", "", "hello <|endoftext|>", "naïve caf",
            "1234", "don'", "a <|endoftext|>b"]


def _unstable(enc, text, **kw):
    stable, completions = enc.encode_with_unstable(text, **kw)
    return stable, sorted(map(tuple, completions))


def test_encode_with_unstable_equals_tiktoken(pair):
    tok, ref = pair
    for text in UNSTABLE:
        assert _unstable(tok, text, allowed_special="all") == _unstable(ref, text, allowed_special="all"), text
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode_with_unstable("a <|endoftext|>")
    assert _unstable(tok, "a <|endoftext|>", disallowed_special=()) == \
        _unstable(ref, "a <|endoftext|>", disallowed_special=())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.sampled_from("ab éç日本\n\t.,'0123🙂") , max_size=12))
def test_generated_text_equals_tiktoken(pair, text):
    tok, ref = pair
    ids = ref.encode_ordinary(text)
    assert tok.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    assert np.array_equal(tok.encode_to_numpy(text), ref.encode_to_numpy(text))
    if not text.endswith((" ", "\n", "\t")):  # ending in whitespace: tens of thousands of completions
        assert _unstable(tok, text) == _unstable(ref, text)


def test_a_custom_tiktoken_file_takes_the_special_tokens_its_error_asks_for(bundled, tmp_path):
    """A .tiktoken file that is not a standard one needs pattern= "and special_tokens= if it has any",
    as its error says: Tokenizer.load takes both (it refused special_tokens=), encodes as tiktoken's
    Encoding of the same ranks and specials, and pickles with them."""
    import pickle

    import tiktoken.load

    from sqltok.bpe.tiktoken_file import read_tiktoken

    path = tmp_path / "custom.tiktoken"
    path.write_bytes(b"".join(bundled("r50k_base.tiktoken").read_bytes().splitlines(keepends=True)[:3000]))
    with pytest.raises(sqltok.SqltokError, match="special_tokens= if it has any"):
        sqltok.Tokenizer.load(path)
    pattern, specials = read_tiktoken(bundled("r50k_base.tiktoken")).pattern, {"<|eot|>": 3000, "<|pad|>": 3001}
    tok = sqltok.Tokenizer.load(path, pattern=pattern, special_tokens=specials)
    ref = tiktoken.Encoding("custom", pat_str=pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                            special_tokens=specials)
    text = "Hello world<|eot|> again <|pad|>"
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert (tok.special_tokens_set, tok.n_vocab) == (ref.special_tokens_set, ref.n_vocab)
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)
    assert pickle.loads(pickle.dumps(tok)).encode(text, allowed_special="all") == \
        ref.encode(text, allowed_special="all")
    for name in ("vocab.json", "merges.txt"):
        (tmp_path / name).write_bytes(bundled(f"gpt2_{name}").read_bytes())
    with pytest.raises(sqltok.SqltokError, match="special_tokens= is for .tiktoken files"):
        sqltok.Tokenizer.load(tmp_path / "vocab.json", special_tokens={})


def test_a_custom_pattern_pretokens_are_its_whole_matches(bundled, tmp_path):
    """A pattern sqltok's matcher does not know splits as tiktoken's `find_iter`: each whole match is a
    pretoken (sqltok took `regex.findall`'s groups when the pattern captured one: "hello" as "o"),
    text no match covers is left out; single texts, batches and SQL alike."""
    import duckdb
    import tiktoken.load

    path = tmp_path / "custom.tiktoken"
    path.write_bytes(bundled("r50k_base.tiktoken").read_bytes() + b"YWJjZGVmZ2g= 50257\n")
    pattern = r"(\w)+|[^\w\s]+"  # no match for white space
    tok = sqltok.Tokenizer.load(path, pattern=pattern)
    ref = tiktoken.Encoding("custom", pat_str=pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                            special_tokens={})
    texts = ["hello world, abcdefgh!", "", "  ", "déjà vu 123"]
    want = [ref.encode_ordinary(t) for t in texts]
    assert [tok.encode_ordinary(t) for t in texts] == want and want[0] == [31373, 6894, 11, 50257, 0]
    assert tok.encode_ordinary_batch(texts * 20) == want * 20
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('c', ?, pattern := ?)", [str(path), pattern]).fetchall()
    assert [r[0] for r in con.execute("SELECT encode('c', t) FROM unnest(?) WITH ORDINALITY u(t, i) ORDER BY i",
                                      [texts]).fetchall()] == want


def test_wordpiece_has_the_same_api(bundled):
    """The same calls on a WordPiece tokenizer: decoding is HF's decoder, and `decode_with_offsets`
    says where each token's part of that text starts."""
    from sqltok import Tokenizer

    tok = Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))
    batch = [tok.encode(t) for t in ["Hello, world!", "naïve café", "don't", ""]]
    assert tok.decode_batch(batch) == [tok.decode(ids) for ids in batch]
    assert tok.decode_bytes_batch(batch) == [tok.decode(ids).encode() for ids in batch]
    assert np.array_equal(tok.encode_to_numpy("Hello, world!"), np.array(batch[0], np.uint32))
    assert tok.encode_single_token("##ing") == tok.token_to_id("##ing")
    assert tok.is_special_token(tok.token_to_id("[CLS]")) and not tok.is_special_token(tok.token_to_id("the"))
    with pytest.raises(KeyError):
        tok.eot_token  # noqa: B018  (no <|endoftext|>, as tiktoken says)
    with pytest.raises(KeyError):
        tok.decode_single_token_bytes(tok.n_vocab)
    ids = tok.encode("Hello, world! It's a test-case.")
    text, offsets = tok.decode_with_offsets(ids)
    assert text == tok.decode(ids) == "hello, world! it ' s a test - case."  # as HF decodes it
    parts = [text[a:b] for a, b in zip(offsets, offsets[1:] + [len(text)])]
    assert parts == ["", "hello", ",", " world", "!", " it", " '", " s", " a", " test", " -", " case", ".", ""]
