"""SentencePiece-style tokenizer.json files (HF Unigram; BPE with byte fallback), converted from
`.model` files by `transformers`' converters at test time: ids equal HF `tokenizers`'
`encode(text, add_special_tokens=False)`, decoded text its `decode`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

sentencepiece = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
convert_slow = pytest.importorskip("transformers.convert_slow_tokenizer")
from sentencepiece import sentencepiece_model_pb2  # noqa: E402

from sqltok import Tokenizer  # noqa: E402
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError  # noqa: E402
from sqltok.formats.kind import sniff  # noqa: E402
from sqltok.sentencepiece.hf_tokenizer import HfSentencePieceTokenizer  # noqa: E402
from sqltok.unigram.hf_json import tokenizer_json  # noqa: E402
from sqltok.unigram.model_proto import read_pieces  # noqa: E402
from sqltok.unigram.sentences import charsmap  # noqa: E402
from sqltok.unigram.spec import UnigramSpec  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "shared/fixtures/tokenizers/sentencepiece-test-models"
CORPORA = Path(__file__).resolve().parents[2] / "shared/fixtures/corpora"
MISTRAL_V1 = Path(pytest.importorskip("mistral_common").__file__).parent / "data/tokenizer.model.v1"


def _proto(path: Path):
    m = sentencepiece_model_pb2.ModelProto()
    m.ParseFromString(path.read_bytes())
    return m


def generic_json(path: Path, legacy: bool = True) -> str:
    """transformers' converter for a `.model` without a model-specific class, control pieces as
    special added tokens (as `TokenizersBackend` loads one)."""
    m = _proto(path)
    vocab = [(p.piece, p.score) for p in m.pieces]
    if m.trainer_spec.model_type == 2:
        vocab = {p: i for i, (p, _) in enumerate(vocab)}
    tok = convert_slow.SpmConverter.build_tokenizer_from_spm_proto(m, vocab, legacy=legacy)
    tok.add_special_tokens([tokenizers.AddedToken(p.piece, normalized=False, special=True)
                            for p in m.pieces if p.type == 3])
    return tok.to_str()


def llama_json(path: Path, legacy: bool) -> str:
    """What LlamaConverter writes (its normalizer, pre-tokenizer and decoder over the generic
    converter's model: transformers 5.24's LlamaConverter fails on BPE models in its extractor):
    legacy Prepend('▁') + Replace(' ', '▁') and no pre-tokenizer, else Metaspace 'first'."""
    tok = tokenizers.Tokenizer.from_str(generic_json(path, legacy))
    n, p, d = tokenizers.normalizers, tokenizers.pre_tokenizers, tokenizers.decoders
    if legacy:
        tok.normalizer = n.Sequence([n.Prepend("▁"), n.Replace(" ", "▁")])
        tok.pre_tokenizer = None
    else:
        tok.normalizer = None
        tok.pre_tokenizer = p.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = d.Sequence([d.Replace("▁", " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)])
    return tok.to_str()


def _texts(step: int) -> list[str]:
    texts = []
    for f in sorted(CORPORA.glob("*.jsonl")):
        with f.open(encoding="utf-8") as lines:
            texts += [json.loads(line)["text"] for line in lines][::step]
    return texts


CASES = {
    "mistral-v1-llama-legacy": lambda: llama_json(MISTRAL_V1, True),
    "mistral-v1-llama": lambda: llama_json(MISTRAL_V1, False),
    "mistral-v1-generic": lambda: generic_json(MISTRAL_V1),
    "botchan-bpe-generic": lambda: generic_json(MODELS / "botchan_en_bpe_1000.model"),
    "botchan-unigram-generic": lambda: generic_json(MODELS / "botchan_en_unigram_1000.model"),
    "kyoto-unigram-generic": lambda: generic_json(MODELS / "kyoto_ja_unigram_8000.model"),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, tmp_path_factory):
    text = CASES[request.param]()
    path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    return request.param, tokenizers.Tokenizer.from_file(str(path)), path


def test_kinds_by_content(tmp_path):
    for text, kind in ((generic_json(MODELS / "botchan_en_unigram_1000.model"), "hf-unigram"),
                       (llama_json(MISTRAL_V1, True), "hf-sp-bpe")):
        path = tmp_path / "weird.name"
        path.write_text(text, encoding="utf-8")
        assert sniff(path).kind == kind
        assert isinstance(Tokenizer.load(path), HfSentencePieceTokenizer)


def test_fixture_languages_ids_and_decode(pair):
    case, hf, path = pair
    tok = Tokenizer.load(path)
    texts = _texts(25)
    ours = tok.encode_batch(texts, allowed_special="all")  # HF always matches added tokens
    theirs = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert [t for t, a, b in zip(texts, ours, theirs) if a != b] == []
    assert tok.decode_batch(ours) == hf.decode_batch(ours)


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)
       | st.text(" ▁ab\n\t.1é漢", max_size=20))
def test_hypothesis_text(text):
    for case in ("mistral-v1-llama-legacy", "mistral-v1-llama", "botchan-unigram-generic", "botchan-bpe-generic"):
        tok, hf = _loaded(case)
        ids = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, allowed_special="all") == ids, case
        assert tok.decode(ids) == hf.decode(ids), case


# a literal "▁" is no space to the converter's Replace(\A +| +\z), which runs before Replace(" " -> "▁"):
# HF keeps a trailing one ("▁" -> [▁, ▁]) where sentencepiece's remove_extra_whitespaces drops it
LITERAL_SPACE_SYMBOL = ["▁", "▁▁", " ▁", "▁a▁", "a ▁", "a▁  ", "▁ ", "  ▁  ", "▁\u3000", "a\u3000▁\u3000b▁"]


@pytest.mark.parametrize("text", LITERAL_SPACE_SYMBOL)
def test_literal_space_symbol(pair, text):
    case, hf, path = pair
    tok = HfSentencePieceTokenizer.from_file(sniff(path), case)
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([" ", "  ", "▁", "▁▁", "\u3000", "\u00a0", "\t", "\n", "a", "bc", "漢", "<s>"]),
                max_size=10).map("".join))
def test_hypothesis_spaces_and_space_symbols(text):
    """Texts made of spaces, "▁"s and a few letters, on every pipeline of CASES."""
    for case in sorted(CASES):
        tok, hf = _loaded(case)
        ids = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, allowed_special="all") == ids, case
        assert tok.decode(ids) == hf.decode(ids), case


_CACHE: dict = {}


def _loaded(case: str):
    if case not in _CACHE:
        text = CASES[case]()
        _CACHE[case] = (HfSentencePieceTokenizer.from_json(text, case), tokenizers.Tokenizer.from_str(text))
    return _CACHE[case]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 31999), max_size=12) | st.lists(st.integers(3, 258), max_size=12))
def test_decode_any_ids(ids):
    """Byte tokens that are no UTF-8 are one U+FFFD per byte of their run, special tokens skipped."""
    tok, hf = _loaded("mistral-v1-llama-legacy")
    assert tok.decode(ids) == hf.decode(ids)


def test_unknown_ids_are_key_errors():
    """An id without a piece is `UnknownTokenError`, a KeyError as tiktoken and the other families
    raise, or an OverflowError when no u32 holds it, as tiktoken's (HF: an id past the vocabulary
    decodes to nothing, a negative one is an OverflowError)."""
    tok, _ = _loaded("mistral-v1-llama-legacy")
    for bad, error, message in (([tok.n_vocab], KeyError, "not in this vocabulary"),
                                ([0, 2**31], KeyError, "not in this vocabulary"),
                                ([0, -1], OverflowError, "out of range"), ([2**32], OverflowError, "out of range")):
        with pytest.raises(error, match=message):
            tok.decode(bad)
        with pytest.raises(error, match=message):
            tok.decode_batch([[1], bad])


def test_id_containers_are_taken_as_tiktoken_takes_them():
    """decode refuses a set, a dict or a generator (tiktoken's decode takes sequences only: a set
    decoded in its own order); decode_with_offsets takes any iterable (a generator was a TypeError)."""
    tok, _ = _loaded("mistral-v1-llama-legacy")
    ids = [1, 15043, 3186]
    for bad in ({15043}, {15043: 1}, (i for i in ids)):
        with pytest.raises(TypeError):
            tok.decode(bad)
    assert tok.decode(tuple(ids)) == tok.decode(ids)
    assert tok.decode_with_offsets(i for i in ids) == tok.decode_with_offsets(ids)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 999) | st.sampled_from([0, 1, 2]), max_size=10), min_size=1, max_size=4))
def test_decode_skip_special_tokens(batch):
    """HF's decode with skip_special_tokens either way: a special token kept is its text, through
    the decoder chain (Strip of the first space, the Metaspace decoder's first token)."""
    for case in ("mistral-v1-llama-legacy", "botchan-unigram-generic"):
        tok, hf = _loaded(case)
        for skip in (True, False):
            assert tok.decode_batch(batch, skip_special_tokens=skip) == hf.decode_batch(batch, skip_special_tokens=skip)
            assert tok.decode(batch[0], skip_special_tokens=skip) == hf.decode(batch[0], skip_special_tokens=skip)


def test_special_tokens_between_text():
    tok, hf = _loaded("mistral-v1-llama-legacy")
    text = "hi<s> there</s>x"
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)


def test_pickles():
    import pickle
    tok, _ = _loaded("botchan-unigram-generic")
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode("Hello world") == tok.encode("Hello world")


@pytest.mark.parametrize("edit, named", [
    (lambda d: d.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                                      "split": True}]}), "WhitespaceSplit"),
    (lambda d: d["normalizer"]["normalizers"].insert(1, {"type": "NFKD"}), "NFKD"),  # after Precompiled
    (lambda d: d["decoder"]["decoders"].insert(0, {"type": "CTC"}), "CTC"),
    (lambda d: d["model"].update(merges=d["model"]["merges"][1:]), "lacks"),
])
def test_refused_components(edit, named, tmp_path):
    doc = json.loads(generic_json(MODELS / "botchan_en_bpe_1000.model"))
    edit(doc)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError, match=named):
        Tokenizer.load(path)


def test_first_scheme_after_whitespace_rules_refused(tmp_path):
    """Metaspace 'first' after nmt_nfkc and SentencePiece's whitespace rules: HF's prefix depends on
    the normalized text's first character, which sqltok does not follow; refused, named."""
    path = tmp_path / "tokenizer.json"
    path.write_text(generic_json(MODELS / "botchan_en_bpe_1000.model", legacy=False), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError, match="prepend_scheme 'first' after a Precompiled"):
        Tokenizer.load(path)


def test_unigram_export_loads_back(tmp_path):
    """`sqltok export NAME --format hf` of a Unigram model (its tokenizer.json writer) loads back,
    with HF's ids and decoding."""
    proto = (MODELS / "botchan_en_unigram_1000.model").read_bytes()
    text = tokenizer_json(read_pieces(proto), UnigramSpec(), charsmap("nmt_nfkc"))
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    tok, hf = Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    assert sniff(path).kind == "hf-unigram"
    texts = _texts(60)
    ours = tok.encode_batch(texts, allowed_special="all")
    assert ours == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.decode_batch(ours) == hf.decode_batch(ours)


def test_empty_unigram_is_a_format_error(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"type": "Unigram", "vocab": []}}', encoding="utf-8")
    with pytest.raises(ModelFormatError, match="model.vocab is empty"):
        Tokenizer.load(path)


@pytest.mark.parametrize("edit", [
    lambda d: d["normalizer"].update(normalizers=5),
    lambda d: d["decoder"].update(decoders=1.5),
    lambda d: d["model"]["vocab"].update({"▁the": "x"}),
    lambda d: d["model"].update(unk_token={}),
    lambda d: d["normalizer"]["normalizers"][0].update(precompiled_charsmap="é"),
], ids=["normalizers", "decoders", "vocab-id", "unk_token", "charsmap"])
def test_parts_of_the_wrong_type_are_format_errors(edit, tmp_path):
    """HF refuses each of these files; sqltok named neither the file nor the problem (TypeError, ValueError)."""
    doc = json.loads(generic_json(MODELS / "botchan_en_bpe_1000.model"))
    edit(doc)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not a well-formed") as e:
        Tokenizer.load(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("edit", [
    lambda d: d["normalizer"]["normalizers"].insert(0, {"type": "Replace", "pattern": {"String": "a"},
                                                        "content": "\ud800"}),
    lambda d: d["added_tokens"].append({"id": 5, "content": "x\udfff", "special": True}),
], ids=["replace-content", "added-token"])
def test_lone_surrogate_escapes_are_format_errors(edit, tmp_path):
    """"\\ud800" in a tokenizer.json is no character (HF refuses the file); sqltok loaded it and
    failed on the first text with a UnicodeEncodeError, or on load without naming the file."""
    doc = json.loads(generic_json(MODELS / "botchan_en_bpe_1000.model"))
    edit(doc)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=r"line 1 column \d+: a lone surrogate escape \(\\ud[8f]") as e:
        Tokenizer.load(path).encode("a b")
    assert str(path) in str(e.value)
    doc = {"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["\ud83d\ude00", -1.0]], "unk_id": 0}}
    path.write_text(json.dumps(doc), encoding="utf-8")  # a pair is its character
    assert Tokenizer.load(path).encode("\U0001f600") == [1]


def test_unigram_ties_follow_hf():
    """HF sums Unigram scores in float64, sentencepiece in float32 (brought back to 0 beyond 1e5):
    on the texts where the two segment differently, the tokenizer.json gives HF's ids and the
    `.model` sentencepiece's."""
    model = MODELS / "kyoto_ja_unigram_8000.model"
    tok, hf = _loaded("kyoto-unigram-generic")
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    texts = _texts(1)
    theirs = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    ties = [k for k, (t, ids) in enumerate(zip(texts, theirs)) if sp.encode(t) != ids]
    assert len(ties) >= 3
    assert tok.encode_batch([texts[k] for k in ties], allowed_special="all") == [theirs[k] for k in ties]
    spm = Tokenizer.load(model)
    assert spm.encode_batch([texts[k] for k in ties], disallowed_special=()) == [sp.encode(texts[k]) for k in ties]


def test_non_special_added_tokens_like_hf():
    """transformers adds user-defined pieces (Mistral v3's [REFERENCE_DOC_n]) as non-special added
    tokens, which HF splits out before the normalizer ("hello[REFERENCE_DOC_0]world" -> ..., '▁world'
    where sentencepiece gives 'world'); so does sqltok (more in test_sentencepiece_added_tokens.py)."""
    path = MISTRAL_V1.parent / "mistral_instruct_tokenizer_240323.model.v3"
    m = _proto(path)
    tok = convert_slow.SpmConverter.build_tokenizer_from_spm_proto(m, {p.piece: i for i, p in enumerate(m.pieces)})
    tok.add_tokens([tokenizers.AddedToken(p.piece, normalized=False, special=False) for p in m.pieces if p.type == 4])
    doc = json.loads(tok.to_str())
    doc["model"]["ignore_merges"] = False
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    text = "hello[REFERENCE_DOC_0]world [REFERENCE_DOC_19]"
    assert HfSentencePieceTokenizer.from_json(json.dumps(doc), "v3").encode(text) == \
        hf.encode(text, add_special_tokens=False).ids


def _ignore_merges(text: str, split: bool | None = None) -> str:
    """A tokenizer.json with BPE `ignore_merges` true (and its Metaspace's `split` set)."""
    doc = json.loads(text)
    doc["model"]["ignore_merges"] = True
    for step in _steps_of(doc["pre_tokenizer"]) if split is not None else []:
        if step["type"] == "Metaspace":
            step["split"] = split
    return json.dumps(doc)


def _steps_of(pre: dict | None) -> list[dict]:
    return [] if pre is None else pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]


IGNORE_MERGES = {
    # Metaspace split false, or no pre-tokenizer: each text between added tokens is one word
    "mistral-v1-llama": lambda: _ignore_merges(llama_json(MISTRAL_V1, False)),
    "mistral-v1-llama-legacy": lambda: _ignore_merges(llama_json(MISTRAL_V1, True)),
    "botchan-bpe-generic": lambda: _ignore_merges(generic_json(MODELS / "botchan_en_bpe_1000.model")),
    # Metaspace split true: each "▁" starts a word; "first" leaves the text after a token bare
    "botchan-bpe-split": lambda: _ignore_merges(llama_json(MODELS / "botchan_en_bpe_1000.model", False), True),
    "botchan-bpe-generic-split": lambda: _ignore_merges(generic_json(MODELS / "botchan_en_bpe_1000.model"), True),
}
#: words that are pieces merging would not give (a byte piece, the unknown piece), after a token
#: (no "▁" before them under Metaspace "first")
NOT_MERGED = ["<s><0x0A>", "<s><unk>", "<s><unk> <unk>x", "</s><0x41><s> <unk>", "<s>▁<unk>", "hello <s>hello"]


@pytest.mark.parametrize("case", sorted(IGNORE_MERGES))
def test_ignore_merges_like_hf(case):
    """HF's BPE `ignore_merges`: a word (a pre-token) that is a piece is that piece, unmerged."""
    text = IGNORE_MERGES[case]()
    tok, hf = HfSentencePieceTokenizer.from_json(text, case), tokenizers.Tokenizer.from_str(text)
    texts = _texts(25) + NOT_MERGED
    theirs = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, allowed_special="all") == theirs
    assert [tok.encode(t, allowed_special="all") for t in NOT_MERGED] == theirs[-len(NOT_MERGED):]


def test_ignore_merges_changes_ids():
    """The cases above can fail: without `ignore_merges` the same texts give other ids."""
    for case in ("mistral-v1-llama", "botchan-bpe-split"):
        doc = json.loads(IGNORE_MERGES[case]())
        doc["model"]["ignore_merges"] = False
        tok = HfSentencePieceTokenizer.from_json(json.dumps(doc), case)
        hf = tokenizers.Tokenizer.from_str(IGNORE_MERGES[case]())
        assert tok.encode_batch(NOT_MERGED, allowed_special="all") != \
            [e.ids for e in hf.encode_batch(NOT_MERGED, add_special_tokens=False)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([" ", "  ", "▁", "<s>", "</s>", "<unk>", "<0x0A>", "<0x41>", "a", "the", "hello",
                                 "漢", "\n", "é", "x"]), max_size=10).map("".join))
def test_hypothesis_ignore_merges(text):
    for case in sorted(IGNORE_MERGES):
        if ("ignore_merges", case) not in _CACHE:
            doc = IGNORE_MERGES[case]()
            _CACHE["ignore_merges", case] = (HfSentencePieceTokenizer.from_json(doc, case),
                                             tokenizers.Tokenizer.from_str(doc))
        tok, hf = _CACHE["ignore_merges", case]
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, case


def test_ignore_merges_with_hf_whitespace_refused(tmp_path):
    """BPE `ignore_merges` under HF's own whitespace steps (WhitespaceSplit, Metaspace 'always'
    without SentencePiece's Replace steps): refused, named."""
    doc = json.loads(generic_json(MODELS / "botchan_en_bpe_1000.model"))
    doc["normalizer"] = None
    doc["model"]["ignore_merges"] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError, match="ignore_merges true with a Metaspace"):
        Tokenizer.load(path)
