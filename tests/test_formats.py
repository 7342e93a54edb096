"""Model file formats: the reference `.model` text format, GPT-2 byte-unicode, HF tokenizer.json export."""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from sqltok.bpe.byte_unicode import bytes_to_unicode_str, unicode_str_to_bytes
from sqltok.formats.errors import ExportError, ModelFormatError
from sqltok.bpe.hf_write import to_hf_json, write_hf
from sqltok.bpe.reference_file import dumps, loads, read_reference, write_reference
from sqltok.bpe.model import BYTE_ALPHABET, Merge, Model

GOLDEN_MODELS = [
    "bpe_en_simple_v2048", "bpe_en_v8192", "bpe_en_v7433", "bpe_multi_v4096",
    "boundless_en_simple_v2048", "boundless_en_v8192", "boundless_en_greedy_v8192",
    "boundless_multi_v4096", "super_en_v8192",
]

SIMPLE_SETTINGS = {"tau": 1.1, "is_super": False, "superbpe_mode": False, "blowup": False,
                   "main_regex": r"\S+|\s+", "script_specific_regex": None,
                   "script_specific_scripts": None, "merge_pattern": r"\p{L}"}


def golden_bytes(golden_dir: Path, name: str) -> bytes:
    return gzip.decompress((golden_dir / f"{name}.gz").read_bytes())


def golden_text(golden_dir: Path, name: str) -> str:
    return golden_bytes(golden_dir, name).decode("utf-8")


def tiny_model(pairs: list[tuple[bytes, bytes]]) -> Model:
    """A word model over the byte alphabet with one merge per pair; a merge whose result exists adds no token."""
    tokens = [bytes([b]) for b in BYTE_ALPHABET]
    ids = {t: i for i, t in enumerate(tokens)}
    merges = []
    for left, right in pairs:
        if left + right not in ids:
            ids[left + right] = len(tokens)
            tokens.append(left + right)
        merges.append(Merge(ids[left], ids[right], 100 - len(merges), 1))
    n = len(tokens)
    return Model("word", tokens, [7] * n, [False] * n, merges, dict(SIMPLE_SETTINGS), {"<|endoftext|>": n})


# b"abc" is made twice: first by (ab, c), again by (a, bc).
DUPLICATE_PAIRS = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")]


@pytest.fixture
def hf_tokenizer():
    return pytest.importorskip("tokenizers").Tokenizer


# ----------------------------------------------------------------------------- byte <-> unicode


def test_byte_unicode_is_a_bijection_without_spaces():
    every_byte = bytes(range(256))
    s = bytes_to_unicode_str(every_byte)
    assert len(set(s)) == 256 and unicode_str_to_bytes(s) == every_byte
    assert not any(c.isspace() for c in s)
    assert bytes_to_unicode_str(b" \n") == "ĠĊ"


def test_byte_unicode_matches_hf_alphabet():
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    assert set(bytes_to_unicode_str(bytes(range(256)))) == set(pre_tokenizers.ByteLevel.alphabet())


def test_unicode_str_to_bytes_rejects_unmapped_char():
    with pytest.raises(ValueError, match="U\\+0400"):
        unicode_str_to_bytes("a\u0400")


# ----------------------------------------------------------------------------- reference .model


@pytest.mark.parametrize("name", GOLDEN_MODELS)
def test_golden_model_round_trips_byte_for_byte(golden_dir, tmp_path, name):
    original = golden_bytes(golden_dir, f"{name}.model")
    (tmp_path / "in.model").write_bytes(original)
    model = read_reference(tmp_path / "in.model")
    write_reference(model, tmp_path / "out.model")
    assert (tmp_path / "out.model").read_bytes() == original
    assert loads(dumps(model)) == model


def test_golden_model_content(golden_dir):
    model = loads(golden_text(golden_dir, "bpe_en_simple_v2048.model"))
    space = model.tokens.index(b" ")
    assert (model.method, model.vocab_size, model.special_tokens) == ("word", 2048, {"<|endoftext|>": 2048})
    assert model.merges[0] == Merge(space, space, 434668, 1)
    assert model.tokens[243] == b"  " and not model.script_aware and model.super_settings is None

    two_phase = loads(golden_text(golden_dir, "boundless_multi_v4096.model"))
    assert (two_phase.method, len(two_phase.merges), len(two_phase.supermerges)) == ("boundless", 3717, 136)
    assert sum(two_phase.is_super) == 136 and two_phase.super_settings["is_super"] is True
    assert two_phase.script_aware


def test_duplicate_result_merge_round_trips():
    model = tiny_model(DUPLICATE_PAIRS)
    assert (len(model.merges), model.vocab_size) == (4, 243 + 3)
    assert loads(dumps(model)) == model


def test_crlf_line_ends_read_like_lf():
    text = dumps(tiny_model(DUPLICATE_PAIRS))
    assert loads(text.replace("\n", "\r\n")) == loads(text)


def test_writer_rejects_inconsistent_models():
    model = tiny_model([])
    model.supermerges = [Merge(0, 1, 5, 1)]
    with pytest.raises(ValueError, match="'word' model cannot have supermerges"):
        dumps(model)
    model = tiny_model([])
    model.special_tokens = {"a\nb": 243}
    with pytest.raises(ValueError, match="line break"):
        dumps(model)


def _with_line(text: str, number: int, new: str) -> str:
    lines = text.split("\n")
    lines[number - 1] = new
    return "\n".join(lines)


def _line_of(text: str, content: str) -> int:
    return text.split("\n").index(content) + 1


# (line to replace, relative to a keyword line; replacement; expected message fragment)
CORRUPTIONS = [
    ("header", 0, "BoundlessBPE v3 word", "unsupported format version"),
    ("header", 0, "BoundlessBPE v2 picky", "unknown method"),
    ("header", 0, "hello", "not a reference model file"),
    ("vocabulary", 1, "many", "the number of vocabulary tokens"),
    ("vocabulary", 2, "1 Ā 0 0", "expected token id 0"),
    ("vocabulary", 3, "1 Ā 0 0", "already in the vocabulary with id 0"),
    ("vocabulary", 4, "2 Ѐ 0 0", "byte-to-unicode mapping"),
    ("vocabulary", 5, "3 ă 0", "4 space-separated fields"),
    ("vocabulary", 6, "4 Ą x 0", "a token count"),
    ("vocabulary", 7, "5 ą 0 2", "is_super flag"),
    ("special_tokens", 2, "246", "a special token line"),
    ("special_tokens", 2, "5 <|endoftext|>", "special token id (an integer >= 246)"),
    ("words", 0, "word", "expected 'words'"),
    ("words", 1, "{not json", "invalid settings JSON"),
    ("words", 1, "[1, 2]", "expected a settings JSON object"),
    ("words", 1, '{"tau": 1.1}', "no main_regex string"),  # found by fuzz/readers.py: a KeyError on load
    ("words", 1, '{"main_regex": 7}', "no main_regex string"),
    ("merges", 1, "-4", "the number of merges (an integer >= 0)"),
    ("merges", 2, "1 a b 100 1", "expected merge index 0"),
    ("merges", 2, "0 a Ѐ 100 1", "token 'Ѐ' is not in the vocabulary"),
    ("merges", 2, "0 a a 100 1", "token 'aa' is not in the vocabulary"),
    ("merges", 2, "0 a b 100 7", "the merge flag"),
    ("deletions", 1, "1", "PickyBPE deletions are not supported"),
]


@pytest.mark.parametrize("keyword, offset, new, fragment", CORRUPTIONS)
def test_corrupt_file_names_line_and_problem(keyword, offset, new, fragment):
    text = dumps(tiny_model(DUPLICATE_PAIRS))
    number = 1 if keyword == "header" else _line_of(text, keyword) + offset
    with pytest.raises(ModelFormatError, match=f"^line {number}: .*{re.escape(fragment)}"):
        loads(_with_line(text, number, new))


def test_every_truncation_at_a_line_end_is_reported():
    lines = dumps(tiny_model(DUPLICATE_PAIRS)).split("\n")[:-1]
    for k in range(len(lines)):
        text = "".join(line + "\n" for line in lines[:k])
        with pytest.raises(ModelFormatError, match=f"^line {k + 1}: unexpected end of file, expected "):
            loads(text)


def test_every_truncation_inside_a_line_is_reported():
    text = dumps(tiny_model(DUPLICATE_PAIRS))
    starts = [i + 1 for i, c in enumerate(text) if c == "\n"][:-1]
    for start in [0, *starts]:
        end = text.index("\n", start)
        if end - start >= 2:
            with pytest.raises(ModelFormatError, match="^line "):
                loads(text[: (start + end) // 2])


def test_missing_final_newline_is_accepted():
    text = dumps(tiny_model(DUPLICATE_PAIRS))
    assert loads(text[:-1]) == loads(text)


def test_content_after_the_last_section_is_reported():
    text = dumps(tiny_model(DUPLICATE_PAIRS))
    number = text.count("\n") + 1
    with pytest.raises(ModelFormatError, match=f"^line {number}: unexpected content after the last section"):
        loads(text + "superwords\n")


def test_two_phase_model_needs_its_superwords_section(golden_dir):
    text = golden_text(golden_dir, "boundless_en_simple_v2048.model")
    cut = _line_of(text, "superwords")
    with pytest.raises(ModelFormatError, match=f"^line {cut}: unexpected end of file, expected 'superwords'"):
        loads("".join(line + "\n" for line in text.split("\n")[: cut - 1]))


def test_read_reference_names_the_file(tmp_path):
    lines = dumps(tiny_model([])).encode("utf-8").split(b"\n")
    lines[4] = b"1 \xff 0 0"
    (tmp_path / "bad.model").write_bytes(b"\n".join(lines))
    with pytest.raises(ModelFormatError, match="bad.model: line 5: invalid UTF-8"):
        read_reference(tmp_path / "bad.model")
    lines[4] = b"2 a 0 0"
    (tmp_path / "bad.model").write_bytes(b"\n".join(lines))
    with pytest.raises(ModelFormatError, match="bad.model: line 5: expected token id 1$"):
        read_reference(tmp_path / "bad.model")


# ----------------------------------------------------------------------------- HF tokenizer.json


def _en_valid(golden_dir: Path) -> list[str]:
    return [json.loads(line)["text"] for line in golden_text(golden_dir, "en_valid.jsonl").splitlines()]


def test_hf_export_encodes_like_the_golden_simple_model(golden_dir, hf_tokenizer):
    model = loads(golden_text(golden_dir, "bpe_en_simple_v2048.model"))
    exported = to_hf_json(model)
    tokenizer = hf_tokenizer.from_str(json.dumps(exported))
    assert json.loads(tokenizer.to_str()) == exported  # nothing dropped or defaulted on load
    docs = _en_valid(golden_dir)
    golden = [[int(i) for i in line.split()]
              for line in golden_text(golden_dir, "bpe_en_simple_v2048.en_valid.ids").splitlines()]
    assert len(docs) == len(golden) == 300
    encoded = tokenizer.encode_batch(docs, add_special_tokens=False)
    assert [e.ids for e in encoded] == golden
    assert tokenizer.token_to_id("<|endoftext|>") == 2048


def test_write_hf_writes_what_tokenizers_saves(golden_dir, hf_tokenizer, tmp_path):
    model = loads(golden_text(golden_dir, "bpe_en_simple_v2048.model"))
    write_hf(model, tmp_path / "ours.json")
    hf_tokenizer.from_file(str(tmp_path / "ours.json")).save(str(tmp_path / "theirs.json"))
    assert (tmp_path / "ours.json").read_bytes() == (tmp_path / "theirs.json").read_bytes()


def test_hf_export_refuses_script_aware_model_unless_lossy(golden_dir, hf_tokenizer):
    model = loads(golden_text(golden_dir, "bpe_multi_v4096.model"))
    with pytest.raises(ExportError, match="runs of one Unicode script.*lossy=True"):
        to_hf_json(model)
    with pytest.warns(UserWarning, match="script_specific_regex"):
        exported = to_hf_json(model, lossy=True)
    tokenizer = hf_tokenizer.from_str(json.dumps(exported))
    assert tokenizer.decode(tokenizer.encode("Hello, мир 世界").ids) == "Hello, мир 世界"


def test_hf_export_refuses_two_phase_model_unless_lossy(golden_dir, hf_tokenizer):
    model = loads(golden_text(golden_dir, "boundless_en_simple_v2048.model"))
    with pytest.raises(ExportError, match="cannot apply supermerges across pretokens"):
        to_hf_json(model)
    with pytest.warns(UserWarning, match="drops the 67 supermerges"):
        exported = to_hf_json(model, lossy=True)
    assert len(exported["model"]["vocab"]) == 2048 and len(exported["model"]["merges"]) == len(model.merges)
    tokenizer = hf_tokenizer.from_str(json.dumps(exported))
    super_ids = {i for i, sup in enumerate(model.is_super) if sup}
    for doc in _en_valid(golden_dir)[:20]:
        ids = tokenizer.encode(doc, add_special_tokens=False).ids
        assert not super_ids.intersection(ids) and tokenizer.decode(ids) == doc


def test_hf_export_keeps_duplicate_result_merges(hf_tokenizer):
    model = tiny_model(DUPLICATE_PAIRS)
    exported = to_hf_json(model)
    pairs = [["a", "b"], ["ab", "c"], ["b", "c"], ["a", "bc"]]
    assert exported["model"]["merges"] == pairs
    tokenizer = hf_tokenizer.from_str(json.dumps(exported))
    assert json.loads(tokenizer.to_str())["model"]["merges"] == pairs  # both makers of "abc" kept, ranked
    assert tokenizer.encode("abc").ids == [model.tokens.index(b"abc")]
    assert tokenizer.encode("bc").ids == [model.tokens.index(b"bc")]


def test_hf_export_refuses_merges_hf_may_apply_out_of_order(hf_tokenizer):
    # (abc, d) ranks below (a, bc), which makes b"abc" again: HF could apply it where the model would not.
    model = tiny_model([*DUPLICATE_PAIRS[:2], (b"abc", b"d"), *DUPLICATE_PAIRS[2:]])
    with pytest.raises(ExportError, match="1 merges use a token that a later merge creates again"):
        to_hf_json(model)
    with pytest.warns(UserWarning, match="1 merges use a token"):
        hf_tokenizer.from_str(json.dumps(to_hf_json(model, lossy=True)))


def test_hf_export_refuses_special_tokens_spelled_like_vocabulary_tokens(hf_tokenizer):
    # "ab" is a token and "Ġ" is HF's spelling of the byte b" ": HF would give both added tokens the
    # vocabulary's ids and number "<|x|>" one lower than the model does.
    model = tiny_model(DUPLICATE_PAIRS[:1])
    n = len(model.tokens)
    model.special_tokens = {"ab": n, "\u0120": n + 1, "<|x|>": n + 2}
    with pytest.raises(ExportError, match=r"\['ab', 'Ġ'\] are spelled like vocabulary tokens"):
        to_hf_json(model)
    with pytest.warns(UserWarning, match="spelled like vocabulary tokens"):
        tokenizer = hf_tokenizer.from_str(json.dumps(to_hf_json(model, lossy=True)))
    assert tokenizer.token_to_id("ab") == model.tokens.index(b"ab") != n
    model.special_tokens = {"<|endoftext|>": n}
    to_hf_json(model)
