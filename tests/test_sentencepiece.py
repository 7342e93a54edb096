"""SentencePiece models: ids and decoded text identical to the `sentencepiece` library (the oracle),
on every fixture language, edge cases and generated text; the ModelProto reader and writer; bad files;
the SQL functions."""
import dataclasses
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from sqltok import SentencePieceTokenizer, Tokenizer
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.sentencepiece.model_proto import ModelType, NormalizerSpec, PieceType, read_model_proto
from sqltok.sentencepiece.model_write import write_model_proto
from sqltok.sentencepiece.wire import bytes_field, varint_field


spm = pytest.importorskip("sentencepiece")

#: tests/data/tokenizers: sentencepiece's own test models (its BPE, Unigram and Japanese Unigram) and
#: Mistral's (mistral-common's data folder: v1 plain, v3 with user-defined symbols).
FILES = {"botchan_bpe": "botchan_en_bpe_1000.model", "botchan_unigram": "botchan_en_unigram_1000.model",
         "kyoto_unigram": "kyoto_ja_unigram_8000.model", "mistral_v1": "mistral_tokenizer.model.v1",
         "mistral_v3": "mistral_instruct_tokenizer_240323.model.v3"}
EDGE = ["", " ", "   ", "  a  b  ", "\t\nx\u3000y ", "Hello world", "<s> </s> <unk> [INST]", "ｈｅｌｌｏ！",
        "e\u0301 \u00e9", "\x00\x01\x7f", "😀🦊 👨‍👩‍👧", "▁▁a▁ ▁", "-----", "2000000;", "a" * 3000,
        "\u200b\ufeffzero width", "Ǆ ǅ ǆ ﬁ ㍿", "\U0010ffff\ue000"]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60) | st.text(
    st.sampled_from(list("ab ▁\t\n-0.、日本語한ğé\u0301😀ｈ<>[]/")), max_size=60)


def _corpus() -> list[str]:
    """Every fixture language (tests/data/corpora_sample.jsonl)."""
    with open(Path(__file__).parent / "data" / "corpora_sample.jsonl") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="session")
def model(bundled):
    """model(name): the path of one of FILES."""
    return lambda name: bundled(FILES[name])


@pytest.fixture(scope="session")
def pairs(model):
    """pairs(name): (sqltok's tokenizer, sentencepiece's processor) of one of FILES, loaded once."""
    loaded = {}

    def get(name):
        if name not in loaded:
            loaded[name] = Tokenizer.load(model(name)), spm.SentencePieceProcessor(model_file=str(model(name)))
        return loaded[name]
    return get


@pytest.fixture(scope="module", params=list(FILES))
def pair(request, pairs):
    return pairs(request.param)


def test_ids_and_decode_equal_sentencepiece(pair):
    tok, sp = pair
    texts = _corpus() + EDGE + ["\n".join(_corpus())]  # the last: Unigram path scores past 1e5 (reset)
    ids = tok.encode_arrow(pa.array(texts, pa.large_string()), threads=2)
    assert ids.to_pylist() == sp.encode(texts)
    assert tok.decode_arrow(ids).to_pylist() == sp.decode(sp.encode(texts))
    assert tok.encode_arrow(pa.array(texts), counts_only=True).to_pylist() == [len(x) for x in sp.encode(texts)]


def test_single_text_calls_equal_sentencepiece(pair):
    """The direct path (`SentencePieceEncoder.encode_str`, `decode_ids`): one str in, a list out,
    through a workspace the encoder keeps, so the second round reads words the first one cached;
    texts of 4096 bytes and more are encoded without the GIL. And the ids decoded back."""
    tok, sp = pair
    texts = _corpus() + EDGE + ["\n".join(_corpus())]
    assert any(len(t.encode()) >= 4096 for t in texts)
    want = sp.encode(texts)
    for _ in range(2):
        assert [tok.encode_ordinary(t) for t in texts] == want
        assert [tok.encode(t, disallowed_special=()) for t in texts] == want
        assert [tok.token_count(t) for t in texts] == [len(x) for x in want]
    assert [tok.decode(x) for x in want] == sp.decode(want)
    assert [tok.decode_bytes(x) for x in want] == [t.encode() for t in sp.decode(want)]
    with pytest.raises(ValueError, match="not in this vocabulary"):
        tok.decode([tok.n_vocab])
    with pytest.raises(OverflowError, match="out of range"):
        tok.decode([0, -1])


def test_unknown_and_non_integer_ids_are_refused_as_tiktoken_refuses_them(pair):
    """An id without a piece is a KeyError (`UnknownTokenError`), as tiktoken and the other families
    raise, or an OverflowError when no u32 holds it (tiktoken's conversion of the ids); an id that is
    no integer a TypeError (the direct path took 2.5 as token 2)."""
    tok, _ = pair
    for decode in (tok.decode, tok.decode_bytes, lambda ids: tok.decode_batch([ids]), tok.decode_tokens_bytes):
        for bad in ([tok.n_vocab], [0, 2**31]):
            with pytest.raises(KeyError, match="not in this vocabulary"):
                decode(bad)
        for bad in ([0, -1], [2**32]):
            with pytest.raises(OverflowError, match="out of range"):
                decode(bad)
        with pytest.raises(TypeError):
            decode([2.5, 3])
    with pytest.raises(KeyError):
        tok.decode_single_token_bytes(tok.n_vocab)


def test_single_text_calls_from_threads_and_with_surrogates(pairs):
    """Calls at once from Python threads each take their own workspace; a lone surrogate takes the
    Arrow path, which refuses it as batches do."""
    from concurrent.futures import ThreadPoolExecutor
    tok, sp = pairs("mistral_v1")
    texts = [t * (1 + 5000 // max(len(t), 1)) for t in _corpus()]  # all long: the GIL released
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(tok.encode_ordinary, texts * 3)) == sp.encode(texts * 3)
    for call in (tok.encode_ordinary, tok.encode, tok.token_count, lambda t: tok.encode_ordinary_batch([t])):
        with pytest.raises(sqltok.SqltokError, match="surrogate"):
            call("a\ud800b ok")


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=8))
def test_generated_text_equals_sentencepiece(pair, texts):
    tok, sp = pair
    assert tok.encode_ordinary_batch(texts) == sp.encode(texts)
    assert [tok.decode(x) for x in sp.encode(texts)] == sp.decode(sp.encode(texts))


def test_bpe_of_every_piece_equals_sentencepiece(pairs):
    """Each piece of a BPE model as a text, alone and after another: every piece's merges (the
    last of them at any cut of its bytes) are sentencepiece's."""
    for name in ("botchan_bpe", "mistral_v1"):
        tok, sp = pairs(name)
        pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())
                  if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i))]
        texts = pieces + [a + b for a, b in zip(pieces, pieces[1:])]
        assert tok.encode_ordinary_batch(texts) == sp.encode(texts)


#: characters that are no piece of botchan_bpe or mistral_v1 (BPE symbols looked up by their bytes)
NON_PIECES = ["日", "ğ", "😀", "ꙮ", "\U0001f9a0", "ｈ", "ǅ"]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bpe_of_pieces_and_non_pieces_equals_sentencepiece(pairs, data):
    """Texts made of BPE pieces, spaces and characters that are no piece: the merges of adjacent
    pieces (looked up by their ids) and of non-pieces (by their bytes) are sentencepiece's."""
    for name in ("botchan_bpe", "mistral_v1"):
        tok, sp = pairs(name)
        pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())
                  if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i))]
        parts = st.sampled_from(pieces) | st.sampled_from(NON_PIECES + [" ", "  "])
        texts = data.draw(st.lists(st.lists(parts, max_size=12).map("".join), min_size=1, max_size=4))
        assert tok.encode_ordinary_batch(texts) == sp.encode(texts)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_bpe_of_long_words_equals_sentencepiece(pairs, data):
    """Words far longer than the scan takes (SCAN_SYMBOLS), of pieces without "▁" and of one repeated
    character: merged on the heap, where most candidates go stale, as sentencepiece merges them."""
    for name in ("botchan_bpe", "mistral_v1"):
        tok, sp = pairs(name)
        pieces = [p for p in (sp.id_to_piece(i) for i in range(sp.get_piece_size())
                              if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i))) if "▁" not in p]
        word = data.draw(st.lists(st.sampled_from(pieces), min_size=40, max_size=300).map("".join))
        runs = [c * data.draw(st.integers(65, 5000)) for c in data.draw(st.lists(st.sampled_from("ae 日-"), max_size=2))]
        texts = [word, word + " " + word[::-1]] + runs
        assert tok.encode_ordinary_batch(texts) == sp.encode(texts)
        assert [tok.encode_ordinary(t) for t in texts] == sp.encode(texts)


#: characters that no piece of botchan_bpe or mistral_v1 holds with another (newlines, tabs, control
#: characters, mistral_v1's digits, non-pieces) beside ones that pieces do hold with others
ISOLATED_AND_NOT = list("\n\n\t\r\x01\x1f\x7f0123456789 ▁ae.,-'") + NON_PIECES


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_bpe_cut_at_isolated_characters_equals_sentencepiece(pairs, data):
    """Texts of BPE pieces dense in characters that no piece holds with another: words cut at those
    characters (see `_bpe_words`) give sentencepiece's ids, and no other character is taken for one."""
    for name in ("botchan_bpe", "mistral_v1"):
        tok, sp = pairs(name)
        pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())
                  if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i))]
        parts = st.sampled_from(pieces) | st.sampled_from(ISOLATED_AND_NOT)
        texts = data.draw(st.lists(st.lists(parts, max_size=16).map("".join), min_size=1, max_size=4))
        assert tok.encode_ordinary_batch(texts) == sp.encode(texts)


@settings(max_examples=150, deadline=None)
@given(ids=st.lists(st.integers(0, 999), max_size=30))
def test_decode_of_any_ids_equals_sentencepiece(pairs, ids):
    """Control, unknown and byte pieces in any order (byte runs that are no UTF-8, leading "▁")."""
    for name in ("botchan_bpe", "botchan_unigram", "mistral_v1"):
        tok, sp = pairs(name)
        assert tok.decode(ids) == sp.decode(ids)


@settings(max_examples=60, deadline=None)
@given(batch=st.lists(st.lists(st.integers(0, 999), max_size=20), min_size=1, max_size=4))
def test_decode_skip_special_tokens(pairs, batch):
    """sentencepiece's decode by default; skip_special_tokens=True: that of the ids without the
    control and unknown pieces'."""
    for name in ("botchan_unigram", "mistral_v1"):
        tok, sp = pairs(name)
        special = set(tok.special_tokens.values())
        plain = [[i for i in ids if i not in special] for ids in batch]
        assert tok.decode_batch(batch) == tok.decode_batch(batch, skip_special_tokens=False) == sp.decode(batch)
        assert tok.decode_batch(batch, skip_special_tokens=True) == sp.decode(plain)
        assert tok.decode(batch[0], skip_special_tokens=True) == sp.decode(plain[0])


def test_byte_pieces_decode_as_sentencepiece(pairs):
    tok, sp = pairs("mistral_v1")
    for ids in ([3 + 0xE2, 3 + 0x82], [3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80, 3 + 0x80], [29871, 3 + 0x41, 1, 2],
                [3 + 0xC0, 3 + 0xAF, 415], [13, 3 + 0xED, 3 + 0xA0, 3 + 0x80]):
        assert tok.decode(ids) == sp.decode(ids)


def _variant(path: Path, **changes) -> bytes:
    """A test model with some pieces' types or options changed, written by `model_write`."""
    model = read_model_proto(path.read_bytes(), path.name)
    types, scores = list(model.types), list(model.scores)
    for piece, kind in changes.pop("types", {}).items():
        types[model.pieces.index(piece)] = kind
    for piece, score in changes.pop("scores", {}).items():
        scores[model.pieces.index(piece)] = score
    trainer = dataclasses.replace(model.trainer, **changes.pop("trainer", {}))
    normalizer = dataclasses.replace(model.normalizer, **changes.pop("normalizer", {}))
    return write_model_proto(dataclasses.replace(model, types=types, scores=scores, trainer=trainer,
                                                 normalizer=normalizer))


VARIANTS = {
    "user_defined_bpe": ("botchan_bpe", {"types": {"▁the": PieceType.USER_DEFINED, "ing": PieceType.USER_DEFINED}}),
    "user_defined_unigram": ("botchan_unigram", {"types": {"▁the": PieceType.USER_DEFINED, "ing": PieceType.USER_DEFINED}}),
    # a user-defined "o" (score 0.1 * (1 - 1)) then "n" beats "on": the user-defined score decides
    "user_defined_score": ("botchan_unigram", {"types": {"o": PieceType.USER_DEFINED},
                                               "scores": {"n": -0.02, "on": -0.05}}),
    "unused_bpe": ("botchan_bpe", {"types": {"▁the": PieceType.UNUSED, "er": PieceType.UNUSED}}),
    "unused_unigram": ("botchan_unigram", {"types": {"▁the": PieceType.UNUSED, "s": PieceType.UNUSED}}),
    "suffix_bpe": ("botchan_bpe", {"trainer": {"treat_whitespace_as_suffix": True}}),
    "suffix_unigram": ("botchan_unigram", {"trainer": {"treat_whitespace_as_suffix": True}}),
    "keep_spaces": ("botchan_unigram", {"normalizer": {"remove_extra_whitespaces": False}}),
    "no_escape": ("botchan_bpe", {"normalizer": {"escape_whitespaces": False, "add_dummy_prefix": False}}),
    "identity": ("botchan_unigram", {"normalizer": {"precompiled_charsmap": b"", "name": "identity"}}),
    "unk_surface": ("botchan_bpe", {"trainer": {"unk_surface": "<?>"}}),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_options_and_piece_types_equal_sentencepiece(model, variant):
    """Options and piece types the shipped models do not use, on models `model_write` writes (which
    sentencepiece then loads: the writer's oracle too)."""
    base, changes = VARIANTS[variant]
    content = _variant(model(base), **changes)
    tok, sp = SentencePieceTokenizer.from_bytes(content, variant), spm.SentencePieceProcessor(model_proto=content)
    texts = _corpus()[:80] + EDGE + ["on money", "the thing  the  sing  ", " ing the▁the", "thére 　 are"]
    assert tok.encode_ordinary_batch(texts) == sp.encode(texts)
    assert [tok.decode(x) for x in sp.encode(texts)] == sp.decode(sp.encode(texts))
    assert [tok.normalize(t) for t in texts[-3:]] == [sp.normalize(t) for t in texts[-3:]]


def test_writer_round_trip_keeps_every_field(model):
    """read -> write -> read gives the same model; protobuf's own parser sees the same fields."""
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    for name in FILES:
        data = model(name).read_bytes()
        read = read_model_proto(data, name)
        written = write_model_proto(read)
        assert read_model_proto(written, name) == read
        a, b = pb.ModelProto(), pb.ModelProto()
        a.ParseFromString(data)
        b.ParseFromString(written)
        assert [(p.piece, p.score, p.type) for p in a.pieces] == [(p.piece, p.score, p.type) for p in b.pieces]
        for spec in ("trainer_spec", "normalizer_spec"):  # every value (presence aside) kept
            for field in getattr(a, spec).DESCRIPTOR.fields:
                assert getattr(getattr(a, spec), field.name) == getattr(getattr(b, spec), field.name), field.name


def test_from_bytes_names_the_model_and_loads_as_the_file_does(model):
    data = model("botchan_unigram").read_bytes()
    tok = SentencePieceTokenizer.from_bytes(data, "uni")
    assert tok.name == "uni" and tok.encode("Hello world") == Tokenizer.load(model("botchan_unigram")).encode("Hello world")
    with pytest.raises(ModelFormatError, match="model 'uni'"):
        SentencePieceTokenizer.from_bytes(data[:1000], "uni")
    with pytest.raises(TypeError):
        SentencePieceTokenizer.from_bytes("not bytes", "uni")


def test_tokens_and_special_tokens(model):
    tok = Tokenizer.load(model("mistral_v3"))
    assert isinstance(tok, SentencePieceTokenizer) and tok.name == "mistral_instruct_tokenizer_240323"
    sp = spm.SentencePieceProcessor(model_file=str(model("mistral_v3")))
    text = "[INST] Hello [/INST] world</s>"
    assert tok.encode_ordinary(text) == sp.encode(text)
    inst, end_inst, eos = sp.piece_to_id("[INST]"), sp.piece_to_id("[/INST]"), sp.eos_id()
    got = tok.encode(text, allowed_special="all")
    assert got == [inst] + sp.encode(" Hello ") + [end_inst] + sp.encode(" world") + [eos]
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)
    assert tok.tokens_arrow(pa.array(["Hello world"])).to_pylist() == [["▁Hello", "▁world"]]


def _field_of(data: bytes, number: int, payload: bytes) -> bytes:
    return data + bytes_field(number, payload)


def _minimal(*pieces: tuple[str, int], trainer: bytes = b"") -> bytes:
    out = b"".join(bytes_field(1, bytes_field(1, p) + varint_field(3, t)) for p, t in pieces)
    return out + (bytes_field(2, trainer) if trainer else b"")


@pytest.mark.parametrize("content, error, message", [
    (lambda d: d[:len(d) // 2], ModelFormatError, "truncated"),
    (lambda d: d[:7], ModelFormatError, "truncated"),
    (lambda d: b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", ModelFormatError, "longer than ten bytes"),
    (lambda d: b"\x0a\x02\x0b\x00", ModelFormatError, "wire type 3"),
    (lambda d: _minimal(("<unk>", 2), trainer=varint_field(3, 3)), UnsupportedTokenizerError, "WORD is not implemented"),
    (lambda d: _minimal(("<unk>", 2), trainer=varint_field(3, 9)), ModelFormatError, "model_type 9"),
    (lambda d: _minimal(("a", 1), ("b", 1)), ModelFormatError, "no piece is the unknown piece"),
    (lambda d: _minimal(("<unk>", 2), ("a", 1), ("a", 1)), ModelFormatError, "already defined"),
    (lambda d: _minimal(("<unk>", 2), ("<0x41>", 6)), ModelFormatError, "byte_fallback is false"),
    (lambda d: _minimal(("<unk>", 2), ("<0x41>", 6), trainer=varint_field(35, 1)), ModelFormatError, "1 of the 256"),
    (lambda d: _minimal(("<unk>", 2), ("a", 9)), ModelFormatError, "type 9"),
    (lambda d: _minimal(("<unk>", 2), ("", 1)), ModelFormatError, "piece 1 is empty"),
    (lambda d: _minimal(("<unk>", 2), ("a\0b", 1)), ModelFormatError, "NUL"),
    (lambda d: _field_of(_minimal(("<unk>", 2)), 3, bytes_field(2, b"\x10\x00\x00\x00abc")), ModelFormatError,
     "precompiled_charsmap"),
    (lambda d: _field_of(_minimal(("<unk>", 2)), 5, bytes_field(2, b"\x04\x00\x00\x00\x00\x00\x00\x00a\x00")),
     UnsupportedTokenizerError, "denormalizer_spec"),
    (lambda d: b"\x0a\x03\x0a\x01\xff", ModelFormatError, "not valid UTF-8"),
])
def test_bad_files_get_errors_naming_file_and_problem(model, tmp_path, content, error, message):
    data = model("botchan_bpe").read_bytes()
    path = tmp_path / "broken.model"
    path.write_bytes(content(data))
    with pytest.raises(error, match=message) as e:
        Tokenizer.load(path)
    assert str(path) in str(e.value)


def test_a_spec_given_twice_is_merged_as_protobuf_merges_it(model):
    """A trainer_spec or normalizer_spec appended after the model's (valid protobuf, read by
    sentencepiece as one message with both's fields) adds its fields to the first one: it replaced
    it, so a BPE model became a Unigram one and a normalizer lost its charsmap."""
    data = model("botchan_bpe").read_bytes()
    for extra in (bytes_field(2, varint_field(4, 1000)), bytes_field(3, varint_field(3, 0))):
        content = data + extra
        tok, sp = SentencePieceTokenizer.from_bytes(content, "twice"), spm.SentencePieceProcessor(model_proto=content)
        texts = ["Hello ｗｏｒｌｄ, the thing", "  a  b  "] + _corpus()[:20]
        assert tok.encode_ordinary_batch(texts) == sp.encode(texts)


def test_sql_functions_null_and_empty_rows(con, model):
    path = model("mistral_v1")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert con.execute("SELECT sqltok_load('mistral', ?)", [str(path)]).fetchone()[0] == "mistral: 32000 tokens"
    con.execute("CREATE TABLE docs AS SELECT * FROM (VALUES (1, 'Hello world'), (2, NULL), (3, ''), "
                "(4, 'Grüße, 世界! 🦊')) t(id, text)")
    rows = con.execute("SELECT encode('mistral', text), token_count('mistral', text), tokens('mistral', text), "
                       "decode('mistral', encode('mistral', text)) FROM docs ORDER BY id").fetchall()
    texts = ["Hello world", None, "", "Grüße, 世界! 🦊"]
    for (ids, n, toks, back), text in zip(rows, texts):
        if text is None:
            assert ids is None and n is None and toks is None and back is None
            continue
        assert ids == sp.encode(text) and n == len(ids) and toks == [sp.id_to_piece(i) for i in ids]
        assert back == sp.decode(ids)
    assert con.execute("SELECT encode_special('mistral', '<s>hi')").fetchone()[0] == [1] + sp.encode("hi")


def test_model_types_in_the_api():
    """The model types and piece types are sentencepiece's enum values."""
    assert [int(t) for t in ModelType] == [1, 2, 3, 4]
    assert [int(t) for t in PieceType] == [1, 2, 3, 4, 5, 6]
    assert NormalizerSpec().add_dummy_prefix and sqltok.SentencePieceTokenizer.file_kinds == ("sentencepiece",)
