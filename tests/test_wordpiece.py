"""WordPiece (BERT): ids, tokens and decoded text identical to HF `tokenizers` for bert-base-uncased
(all-MiniLM's tokenizer.json, bundled) and cased variants of it; vocab.txt loading; SQL; bad input."""
import json
import time
import unicodedata
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from hf_unicode import HF_ASSIGNED
from sqltok import Tokenizer, WordPieceTokenizer
from sqltok.formats.errors import UnsupportedTokenizerError

tokenizers = pytest.importorskip("tokenizers")

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
BERT = "bert-base-uncased_tokenizer.json"
TEXTS = ["Du côté de chez Swann", "Hello, world! I'm here; don't go.", "ﬁne 中文字 日本語 한국어 ÀÉÎ",
         "İstanbul ΣΟΦΙΑ", "a" * 101, "a" * 100, "tab\there\nnew\x00line\u200b\ufffd", "", "   ",
         "[CLS] [UNK] [MASK] text", "naïve café résumé", "e\u0301\u0316 x\u0345\u0301"]
# HF tokenizers 0.23.3 uses older Unicode data than 17.0: generated text uses Unicode 14.0 characters.


def corpus_texts() -> list[str]:
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    return [r["text"] for r in rows] + [unicodedata.normalize("NFD", r["text"]) for r in rows if r["lang"] == "el"]


def variant(path: Path, tmp_path: Path, **normalizer) -> Path:
    """A copy of the tokenizer.json with other BertNormalizer switches."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["normalizer"].update(normalizer)
    out = tmp_path / f"variant_{'_'.join(f'{k}{v}' for k, v in normalizer.items())}.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def hf_tokenizer(path: Path):
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.no_truncation()
    hf.no_padding()
    return hf


@pytest.fixture(scope="module")
def bert_path(bundled) -> Path:
    return bundled(BERT)


@pytest.fixture(scope="module")
def bert(bert_path) -> WordPieceTokenizer:
    return Tokenizer.load(bert_path)


def check_same(tok, hf, texts):
    ours = tok.encode_arrow(pa.array(texts, pa.large_string()), allowed_special="all").to_pylist()
    theirs = [e.ids for e in hf.encode_batch(texts)]
    assert [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b] == []
    assert tok.decode_arrow(pa.array(theirs)).to_pylist() == hf.decode_batch(theirs)
    return ours


def test_loads_as_wordpiece(bert):
    assert isinstance(bert, WordPieceTokenizer) and bert.n_vocab == 30522
    assert bert.special_tokens == {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}


def test_uncased_equals_hf(bert, bert_path):
    check_same(bert, hf_tokenizer(bert_path), TEXTS + corpus_texts())


@pytest.mark.parametrize("normalizer", [{"lowercase": False}, {"lowercase": False, "strip_accents": True},
                                        {"strip_accents": False}, {"clean_text": False, "handle_chinese_chars": False}],
                         ids=str)
def test_variants_equal_hf(bert_path, tmp_path, normalizer):
    path = variant(bert_path, tmp_path, **normalizer)
    check_same(Tokenizer.load(path), hf_tokenizer(path), TEXTS + corpus_texts())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("aA éÉ,.##x\u0301中") | HF_ASSIGNED, max_size=50), max_size=5))
def test_generated_text_equals_hf(bert, bert_path, texts):
    check_same(bert, hf_tokenizer(bert_path), texts)


ASCII_WORDS = st.text(st.sampled_from("aZ09xY" * 4 + " \t\n\x00\x01\x0b\x7f.,'-[]é\u0301\u00a0中"), max_size=40) | \
    st.builds(lambda c, n: c * n, st.sampled_from("aBx7"), st.integers(60, 80))


@pytest.fixture(scope="module")
def ascii_variants(bert_path, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ascii")
    paths = [bert_path, variant(bert_path, tmp, lowercase=False), variant(bert_path, tmp, clean_text=False)]
    return [(Tokenizer.load(p), hf_tokenizer(p)) for p in paths]


@settings(max_examples=100, deadline=None)
@given(st.lists(ASCII_WORDS, max_size=8).map("".join))
def test_ascii_fast_path_equals_hf(ascii_variants, text):
    """The fused ASCII pass (8-byte runs, words up to 71 bytes, control bytes, cut points) in the
    uncased, cased and unclean variants."""
    for tok, hf in ascii_variants:
        check_same(tok, hf, [text, text.upper(), text + " " + text])


def test_tokens_specials_pairs_counts(bert, bert_path):
    hf = hf_tokenizer(bert_path)
    text = "Du côté de chez Swann [MASK] x"
    plain = text.replace("[MASK]", "mask")
    assert bert.tokens_arrow(pa.array([plain, None])).to_pylist() == [hf.encode(plain).tokens, None]
    assert bert.encode_arrow(pa.array([text]), allowed_special="all").to_pylist()[0] == hf.encode(text).ids
    mixed = [plain, text, None, "[CLS] a [SEP] b", plain]   # rows with special text among rows without
    assert bert.encode_arrow(pa.array(mixed), allowed_special="all").to_pylist() == \
        [None if t is None else hf.encode(t).ids for t in mixed]
    assert bert.encode(text, disallowed_special=()) != hf.encode(text).ids   # [MASK] as text
    with pytest.raises(ValueError, match="disallowed special token"):
        bert.encode(text)
    assert bert.encode_pair("first one", "second, two") == hf.encode("first one", "second, two").ids
    texts = corpus_texts()[:80]
    pairs = texts[1:] + texts[:1]
    assert bert.encode_pair_arrow(pa.array(texts), pa.array(pairs)).to_pylist() == \
        [e.ids for e in hf.encode_batch(list(zip(texts, pairs)))]
    assert bert.token_count("hello world") == 4
    assert bert.decode(hf.encode("Hello , world!").ids) == "hello, world!"
    assert bert.decode_single_token_bytes(2078) == b"##n"


def test_vocab_txt(bert, bert_path, tmp_path):
    doc = json.loads(bert_path.read_text(encoding="utf-8"))
    tokens = sorted(doc["model"]["vocab"], key=doc["model"]["vocab"].get)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    texts = TEXTS + corpus_texts()[:60]
    from_txt = Tokenizer.load(vocab)
    assert from_txt.encode_arrow(pa.array(texts)).to_pylist() == bert.encode_arrow(pa.array(texts)).to_pylist()
    cased = WordPieceTokenizer.load(vocab, lowercase=False)
    hf_cased = hf_tokenizer(variant(bert_path, tmp_path, lowercase=False))
    assert cased.encode_arrow(pa.array(texts), allowed_special="all").to_pylist() == \
        [e.ids for e in hf_cased.encode_batch(texts)]
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    assert Tokenizer.load(vocab).encode("Hello") == hf_cased.encode("Hello").ids


def test_vocab_txt_lines_as_hf_reads_them(bert_path, tmp_path):
    """A vocab.txt line ends at "\n" (or "\r\n") only, as HF's reader has it: a token holding "\x85",
    "\u2028" or "\x0c" is one token (Python's splitlines cut it in two and shifted every later id);
    a line loses trailing White_Space, which "\x1f" is not."""
    doc = json.loads(bert_path.read_text(encoding="utf-8"))
    tokens = sorted(doc["model"]["vocab"], key=doc["model"]["vocab"].get)
    tokens[2000:2000] = ["x\x85y", "x\u2028y", "x\x0cy", "x\x1f", "xy\u3000 "]
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes("\r\n".join(tokens).encode())
    hf = tokenizers.BertWordPieceTokenizer(str(vocab))
    tok = Tokenizer.load(vocab)
    texts = TEXTS + corpus_texts()[:30]
    assert tok.encode_batch(texts, allowed_special="all") == [e.ids for e in hf.encode_batch(texts)]
    assert tok.n_vocab == hf.get_vocab_size()
    assert [tok.id_to_token(i) for i in range(1995, 2010)] == [hf.id_to_token(i) for i in range(1995, 2010)]


def test_vocab_txt_config_with_added_token_objects(bert, bert_path, tmp_path):
    """transformers writes special tokens into tokenizer_config.json as AddedToken objects too; their
    content is the token (a TypeError before); a config of the wrong shape is a format error."""
    doc = json.loads(bert_path.read_text(encoding="utf-8"))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(sorted(doc["model"]["vocab"], key=doc["model"]["vocab"].get)) + "\n", encoding="utf-8")
    config = tmp_path / "tokenizer_config.json"
    tokens = {key: {"__type": "AddedToken", "content": token, "lstrip": False, "normalized": True}
              for key, token in [("unk_token", "[UNK]"), ("cls_token", "[CLS]"), ("sep_token", "[SEP]")]}
    config.write_text(json.dumps({"do_lower_case": True, **tokens}))
    texts = TEXTS + corpus_texts()[:20]
    assert Tokenizer.load(vocab).encode_batch(texts, allowed_special="all") == \
        bert.encode_batch(texts, allowed_special="all")
    for bad in ("[]", '{"unk_token": {"content": 5}}'):
        config.write_text(bad)
        with pytest.raises(sqltok.SqltokError, match="tokenizer_config.json: "):
            Tokenizer.load(vocab)


def test_vocab_txt_token_listed_twice_is_its_last_id(bert_path, tmp_path):
    """HF's vocabulary map keeps a repeated vocab.txt token's last id (for words, word pieces and
    [UNK]); sqltok matched its first."""
    doc = json.loads(bert_path.read_text(encoding="utf-8"))
    tokens = sorted(doc["model"]["vocab"], key=doc["model"]["vocab"].get)
    tokens[2000:2000] = ["the", "##ing", "[UNK]", "hello  "]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    hf = tokenizers.BertWordPieceTokenizer(str(vocab))
    tok = Tokenizer.load(vocab)
    texts = TEXTS + corpus_texts()[:30] + ["the thing ☃ [UNK] hello", "singing the ##ing"]
    assert tok.encode_batch(texts, allowed_special="all") == [e.ids for e in hf.encode_batch(texts)]
    assert tok.token_to_id("[UNK]") == hf.token_to_id("[UNK]") == 2002


def test_sql(con, bert_path):
    con.sql(f"SELECT sqltok_load('minilm', '{bert_path}')").fetchall()
    row = con.sql("""SELECT encode('minilm', 'Du côté de chez Swann'), tokens('minilm', 'Du côté'),
                            token_count('minilm', 'hello world'), decode('minilm', encode('minilm', 'Hello , world!')),
                            encode('minilm', NULL), decode('minilm', NULL),
                            encode_special('minilm', 'a [SEP] b')""").fetchall()[0]
    assert row == ([101, 4241, 17155, 2139, 18178, 2480, 10677, 2078, 102], ["[CLS]", "du", "cote", "[SEP]"], 4,
                   "hello, world!", None, None, [101, 1037, 102, 1038, 102])
    assert con.sql("SELECT encode_pair('minilm', 'first one', 'second, two'), encode_pair('minilm', NULL, 'x')"
                   ).fetchall() == [([101, 2034, 2028, 102, 2117, 1010, 2048, 102], None)]
    con.sql("CREATE TABLE docs AS SELECT 'Doc number ' || i || ', écrit' AS text FROM range(3000) r(i)")
    con.sql("ALTER TABLE docs ADD COLUMN ids INTEGER[]")
    con.sql("UPDATE docs SET ids = encode('minilm', text)")
    assert con.sql("SELECT count(*) FROM docs WHERE decode('minilm', ids) <> lower(replace(text, 'é', 'e'))"
                   ).fetchall() == [(0,)]


def test_encode_pair_needs_wordpiece(con, bundled):
    con.sql(f"SELECT sqltok_load('r50k', '{bundled('r50k_base.tiktoken')}')").fetchall()
    with pytest.raises(Exception, match="tokenizer 'r50k' has no pair template"):
        con.sql("SELECT encode_pair('r50k', 'a', 'b')").fetchall()


def test_long_words_and_linear_time(bert):
    assert bert.encode("a" * 101, disallowed_special=()) == [101, 100, 102]
    assert bert.encode("\u00e9" * 100) == [101] + bert.encode("e" * 100)[1:-1] + [102]

    def seconds(text):
        start = time.perf_counter()
        bert.encode_arrow(pa.array([text]))
        return time.perf_counter() - start

    unit = "Abc\u0301中xy-"   # a word, a mark, an ideograph, punctuation: no spaces
    small, big = unit * 100_000, unit * 1_000_000
    assert len(big.encode()) > 10_000_000
    assert seconds(big) < 20 * seconds(small) + 0.5
    assert seconds("x" * 10_000_000) < 2


def test_bad_input(bert, bert_path, tmp_path):
    assert bert.encode_arrow(pa.array([None, ""], pa.large_string())).to_pylist() == [None, [101, 102]]
    with pytest.raises(sqltok.SqltokError, match="lone surrogate"):
        bert.encode_batch(["a\ud800"])
    with pytest.raises(ValueError, match="token id 40000 is not in this vocabulary"):
        bert.decode([101, 40000])
    doc = json.loads(bert_path.read_text(encoding="utf-8"))
    doc["pre_tokenizer"] = {"type": "Whitespace"}
    path = tmp_path / "whitespace.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError, match="pre_tokenizer Whitespace"):
        Tokenizer.load(path)


@pytest.mark.parametrize("part, value", [
    ("post_processor", {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[SEPO", "type_id": 0}}],
                        "special_tokens": {}}),   # found by fuzz/readers.py: a KeyError
    ("post_processor", {"type": "BertProcessing", "cls": 5}),
    ("normalizer", "BertNormalizer"),
    ("added_tokens", [7]),
    ("decoder", ["WordPiece"]),
    ("model", {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": "1"}}),
    ("model", {"type": "WordPiece", "vocab": {"[UNK]": 0}, "unk_token": ["[UNK]"]}),
    # special token ids past the vocabulary (HF loads them): encoding read past the id table (a crash)
    ("post_processor", {"type": "BertProcessing", "cls": ["[CLS]", 30522], "sep": ["[SEP]", 102]}),
    ("post_processor", {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                                                 {"Sequence": {"id": "A", "type_id": 0}}],
                        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [-1], "tokens": ["[CLS]"]}}}),
    ("model", {"type": "WordPiece", "vocab": {"[UNK]": 0}, "continuing_subword_prefix": 5}),
    ("model", {"type": "WordPiece", "vocab": {"[UNK]": 0}, "max_input_chars_per_word": 2 ** 70}),
    ("decoder", {"type": "WordPiece", "prefix": 5}),
], ids=str)
def test_malformed_json_is_a_format_error(bert_path, tmp_path, part, value):
    doc = json.loads(bert_path.read_text(encoding="utf-8"))
    doc[part] = value
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(sqltok.SqltokError, match="tokenizer.json"):
        Tokenizer.load(path)
