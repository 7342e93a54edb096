"""`Tokenizer.load` picks the family by a file's content, not its name, and says clearly what a file
is when sqltok cannot read it."""
import json
import shutil

import pytest

import sqltok
from sqltok import BPETokenizer, SqltokError, Tokenizer, WordPieceTokenizer
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.formats.kind import sniff

TEXT = "Hello world, it's 2026! Grüße 世界"


@pytest.mark.parametrize("name, kind, family", [
    ("o200k_base.tiktoken", "tiktoken", BPETokenizer),
    ("bert-base-uncased_tokenizer.json", "hf-wordpiece", WordPieceTokenizer),
    ("gpt2_merges.txt", "gpt2-merges", BPETokenizer),
    ("gpt2_vocab.json", "gpt2-vocab", BPETokenizer),
])
def test_kind_by_content_whatever_the_name(tmp_path, bundled, name, kind, family):
    """The same bytes under a misleading name load as the same tokenizer."""
    src = bundled(name)
    if kind.startswith("gpt2"):
        shutil.copy(bundled("gpt2_vocab.json"), tmp_path / "vocab.json")
        shutil.copy(bundled("gpt2_merges.txt"), tmp_path / "merges.txt")
        src = tmp_path / ("vocab.json" if kind == "gpt2-vocab" else "merges.txt")
        renamed = src
    else:
        renamed = tmp_path / "model.v3"
        shutil.copy(src, renamed)
    assert sniff(renamed).kind == kind
    tok = Tokenizer.load(renamed)
    assert type(tok) is family
    assert tok.encode_ordinary(TEXT) == Tokenizer.load(src).encode_ordinary(TEXT)


def test_gpt2_pair_encodes_like_hf_byte_level_bpe(tmp_path, bundled):
    """GPT-2's vocab.json + merges.txt load as HF's ByteLevelBPETokenizer.from_file reads them."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab, merges = tmp_path / "vocab.json", tmp_path / "merges.txt"
    shutil.copy(bundled("gpt2_vocab.json"), vocab)
    shutil.copy(bundled("gpt2_merges.txt"), merges)
    hf = tokenizers.ByteLevelBPETokenizer.from_file(str(vocab), str(merges))
    for path in (vocab, merges):
        tok = Tokenizer.load(path)
        for text in [TEXT, "  indented\n\tcode()", "naïve café ﬁ"]:
            assert tok.encode_ordinary(text) == hf.encode(text).ids


def test_gpt2_half_of_a_pair_names_the_missing_file(tmp_path, bundled):
    alone = tmp_path / "merges.txt"
    shutil.copy(bundled("gpt2_merges.txt"), alone)
    with pytest.raises(ModelFormatError, match="vocab.json must be beside it"):
        Tokenizer.load(alone)


def test_vocab_txt_is_wordpiece(tmp_path):
    vocab = tmp_path / "anything.vocab"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"]) + "\n")
    tok = Tokenizer.load(vocab)
    assert isinstance(tok, WordPieceTokenizer)
    assert tok.tokens_arrow(sqltok.tokenizer.text_array(["hello worlds"])).to_pylist() == \
        [["[CLS]", "hello", "world", "##s", "[SEP]"]]


def test_sentencepiece_model_is_told_by_content(tmp_path):
    """A SentencePiece ModelProto (here a minimal one: one piece '<unk>'), whatever its name, loads as
    a SentencePiece model."""
    proto = tmp_path / "tokenizer.model.v1"
    piece = b"\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02"
    proto.write_bytes(b"\x0a" + bytes([len(piece)]) + piece)
    assert sniff(proto).kind == "sentencepiece"
    tok = Tokenizer.load(proto)
    assert isinstance(tok, sqltok.SentencePieceTokenizer) and tok.n_vocab == 1
    assert tok.encode("ab") == [0]  # one unknown run


@pytest.mark.parametrize("content, error, message", [
    (b"", ModelFormatError, "the file is empty"),
    (b"\x00\x01\x02garbage", ModelFormatError, "binary data"),
    (b'{"model": {"type": "WordLevel", "vocab": {}}}', UnsupportedTokenizerError, "model type WordLevel"),
    (b'{"version": "1.0"}', ModelFormatError, "not a tokenizer.json"),
    (b'{"model": ', ModelFormatError, "line 1 column 11: invalid JSON"),
    # json's RecursionError and int-size ValueError, not named as the file's problem before
    (b'{"model": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", ModelFormatError, "nested too deeply"),
    (b'{"model": {"type": "WordPiece", "vocab": {"[UNK]": 1' + b"0" * 5000 + b"}}}", ModelFormatError,
     "JSON that cannot be read"),
])
def test_bad_files_get_clear_errors(tmp_path, content, error, message):
    path = tmp_path / "file"
    path.write_bytes(content)
    with pytest.raises(error, match=message):
        Tokenizer.load(path)


def test_a_family_refuses_another_familys_file(bundled):
    with pytest.raises(SqltokError, match="is a tiktoken BPE file, not a file of WordPieceTokenizer"):
        WordPieceTokenizer.load(bundled("o200k_base.tiktoken"))
    with pytest.raises(SqltokError, match="not a file of BPETokenizer"):
        BPETokenizer.load(bundled("bert-base-uncased_tokenizer.json"))


def test_pattern_is_only_for_tiktoken_files(bundled):
    with pytest.raises(SqltokError, match="pattern= is for .tiktoken files"):
        Tokenizer.load(bundled("gpt2_vocab.json"), pattern=r"\w+")


def test_missing_file():
    with pytest.raises(SqltokError, match="no such tokenizer file"):
        Tokenizer.load("/nonexistent/vocab.json")


def test_tokenizer_json_name_and_document_read_once(tmp_path, bundled, monkeypatch):
    """A tokenizer.json is parsed once: sniffing hands its document to the reader."""
    calls = []
    real = json.loads
    monkeypatch.setattr(json, "loads", lambda data, *a, **k: calls.append(1) or real(data, *a, **k))
    tok = Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))
    assert len(calls) == 1 and tok.n_vocab == 30522
