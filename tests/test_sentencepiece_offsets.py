"""`encode_with_offsets` on SentencePiece models: each token's span equal to sentencepiece's (the
oracle: `encode(text, return_type='proto')` pieces' byte `begin`/`end`), as character offsets, on
Mistral's and sentencepiece's own models, every fixture language, edge cases and generated text."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqltok import SqltokError, Tokenizer

spm = pytest.importorskip("sentencepiece")

#: tests/data/tokenizers: sentencepiece's BPE, Unigram and Japanese Unigram test models and Mistral's
#: (v1: BPE with byte fallback; v3: user-defined symbols too).
FILES = ["botchan_en_bpe_1000.model", "botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model",
         "mistral_tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"]
EDGE = ["", " ", "   ", "  lead  and   trail  ", "\t\nx\u3000y\u3000", "Hello world", "ｈｅｌｌｏ！ ＡＢＣ１２３",
        "e\u0301 \u00e9 a\u0323\u0307", "\x00\x01\x7f", "😀🦊 👨‍👩‍👧", "▁▁a▁ ▁", "한국어 조선말 ᄀᄀ", "日本語の文章。",
        "Ǆ ǅ ǆ ﬁ ㍿ ½", "\u200b\ufeffzero width", "\U0010ffff\ue000x", "[INST] <s> </s> [/INST]", "a" * 500]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.lists(
    st.sampled_from([*"ab Z9.,\t\n ", "  ", "▁", "\u3000", "\u00a0", "\u0301", "\u0308", "é", "ｈ", "Ａ", "１", "한",
                     "ᄀ", "ᅡ", "日", "本", "ﬁ", "㍿", "😀", "\ue000", "\U0010ffff", "\x00", "[INST]"]),
    max_size=30).map("".join)


def _corpus() -> list[str]:
    """Every fixture language (tests/data/corpora_sample.jsonl)."""
    with open(Path(__file__).parent / "data" / "corpora_sample.jsonl") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="module", params=FILES)
def pair(request, bundled):
    path = bundled(request.param)
    return Tokenizer.load(path), spm.SentencePieceProcessor(model_file=str(path))


def _sentencepiece(sp, text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """sentencepiece's ids and spans, its byte offsets turned into indices into `text`."""
    data = text.encode()
    pieces = sp.encode(text, return_type="proto").pieces
    chars = [(len(data[:p.begin].decode()), len(data[:p.end].decode())) for p in pieces]
    return [p.id for p in pieces], chars


def _check(tok, sp, text: str) -> None:
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == sp.encode(text) == tok.encode_ordinary(text)
    assert (ids, offsets) == _sentencepiece(sp, text), text


def test_offsets_equal_sentencepiece_on_every_language(pair):
    tok, sp = pair
    for text in _corpus() + EDGE:
        _check(tok, sp, text)


@settings(max_examples=80, deadline=None)
@given(text=TEXT)
def test_offsets_equal_sentencepiece_on_generated_text(pair, text):
    _check(*pair, text)


def test_byte_fallback_and_whitespace_spans(bundled):
    """Mistral v1: an unknown character's byte pieces are empty at its start but the last, which
    covers it. botchan (extra whitespace removed): a kept space goes with the word after it, and
    dropped spaces (leading, repeated, trailing) are covered only where a kept one stands for them."""
    tok = Tokenizer.load(bundled("mistral_tokenizer.model.v1"))
    ids, offsets = tok.encode_with_offsets("hi \U0010ffff")
    assert [tok.decode_single_token_bytes(t) for t in ids] == [b"\xe2\x96\x81hi", b"\xe2\x96\x81", b"<0xF4>",
                                                               b"<0x8F>", b"<0xBF>", b"<0xBF>"]
    assert offsets == [(0, 2), (2, 3), (3, 3), (3, 3), (3, 3), (3, 4)]
    tok = Tokenizer.load(bundled("botchan_en_unigram_1000.model"))
    assert tok.encode_with_offsets("  a  b  ").offsets == [(2, 3), (3, 6)]
    with pytest.raises(SqltokError, match="surrogate"):
        tok.encode_with_offsets("a\ud800b")


def _sentencepiece_decoded(sp, ids: list[int]) -> tuple[str, list[int]]:
    """sentencepiece's decoded text and where each piece starts in it (its pieces' byte `begin` as
    character indices)."""
    proto = sp.decode(ids, return_type="proto")
    data = proto.text.encode()
    return proto.text, [len(data[:p.begin].decode()) for p in proto.pieces]


@settings(max_examples=40, deadline=None)
@given(text=TEXT, data=st.data())
def test_decode_with_offsets_equal_sentencepiece(pair, text, data):
    """`decode_with_offsets` gives `decode`'s text and sentencepiece's start of each piece in it (it
    gave the pieces as spelled, "▁Hello▁world", with offsets into that), control and unknown pieces
    and byte pieces that are no character (U+FFFD) mixed in."""
    tok, sp = pair
    ids = sp.encode(text)
    extra = sorted(tok.special_tokens.values()) + [i for i in range(sp.get_piece_size()) if sp.is_byte(i)][::7]
    for _ in range(data.draw(st.integers(0, 4))):
        ids.insert(data.draw(st.integers(0, len(ids))), data.draw(st.sampled_from(extra)))
    assert tok.decode_with_offsets(ids) == _sentencepiece_decoded(sp, ids)
    assert tok.decode_with_offsets(ids)[0] == tok.decode(ids)


def test_decode_with_offsets_known(bundled):
    tok = Tokenizer.load(bundled("mistral_tokenizer.model.v1"))
    ids = tok.encode("Hello world \U0010ffff")
    assert tok.decode_with_offsets([1, *ids, 2]) == ("Hello world \U0010ffff", [0, 0, 5, 11, 12, 12, 12, 12, 13])


def test_an_unknown_run_across_two_words_is_one_span(bundled, tmp_path):
    """A character that is no piece alone but is inside one ("☃" of an added "☃a") ends a word as an
    unknown id; an unknown character after it, a word of its own, joins that unknown id, whose span
    then covers both (the encoder merges such texts word by word)."""
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    model = pb.ModelProto()
    model.ParseFromString(bundled("botchan_en_bpe_1000.model").read_bytes())
    piece = model.pieces.add()
    piece.piece, piece.score, piece.type = "☃a", -5000.0, pb.ModelProto.SentencePiece.NORMAL
    path = tmp_path / "snowman.model"
    path.write_bytes(model.SerializeToString())
    tok, sp = Tokenizer.load(path), spm.SentencePieceProcessor(model_file=str(path))
    for text in ["x☃😀", "x☃😀y ☃a☃😀😀 b", "☃☃😀", "a☃ 😀☃"]:
        _check(tok, sp, text)
