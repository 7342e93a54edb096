"""Mistral's Tekken tokenizers (`tekken_*.json` from mistral-common) load as byte-level BPE with the
ids and text of mistral-common's own `Tekkenizer` (the oracle)."""
import base64
import json
from pathlib import Path

import pytest

import sqltok
from sqltok.formats.errors import ModelFormatError

tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
DATA = Path(tekken.__file__).parents[2] / "data"


@pytest.fixture(scope="module")
def pair():
    path = DATA / "tekken_240911.json"
    return sqltok.Tokenizer.load(path), tekken.Tekkenizer.from_file(path)


def test_ids_and_text_equal_mistral_common(pair):
    tok, oracle = pair
    texts = [json.loads(line)["text"] for line in open(Path(__file__).parent / "data" / "corpora_sample.jsonl")]
    texts += ["", " ", "<s>[INST] hi [/INST]", "a  \n\n b\t", "😀🦊 e\u0301"]
    want = [oracle.encode(t, bos=False, eos=False) for t in texts]
    assert tok.encode_ordinary_batch(texts) == want
    assert [tok.decode(ids) for ids in want[:60]] == [oracle.decode(ids) for ids in want[:60]]
    assert tok.n_vocab == oracle.n_words
    assert tok.encode("[INST]", allowed_special="all") == [oracle.get_special_token("[INST]")]
    assert tok.special_tokens["<SPECIAL_999>"] == 999


@pytest.mark.parametrize("name", ["tekken_240718.json", "tekken_240911.json"])
def test_tekken_pattern_has_the_native_pretokenizer(name):
    """Tekken's pattern is split by the Cython matcher (PAT_TEKKEN), not by Python `regex`."""
    from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pattern_id
    config = json.loads((DATA / name).read_text(encoding="utf-8"))["config"]
    assert pattern_id(config["pattern"]) == PATTERN_IDS["tekken"]
    assert sqltok.Tokenizer.load(DATA / name)._plain


def test_ids_of_digits_apostrophes_and_long_texts_equal_mistral_common(pair):
    """Where Tekken's split differs from o200k's (one digit per pretoken, no contractions), in texts
    long enough for the 64-byte ASCII windows, and one text over every fixture corpus."""
    tok, oracle = pair
    corpora = Path(__file__).parent / "data" / "corpora_sample.jsonl"
    texts = ["It's 2024: we'll pay $1,234,567.89 for 3 cats' toys; they'RE 'S 'll." * 5,
             "x'S 12 34\n\n  'd 9'9 ſ'S", "a" * 70 + "'s 1234 " + "b" * 70,
             "\n\n".join(json.loads(line)["text"] for line in open(corpora, encoding="utf-8"))]
    want = [oracle.encode(t, bos=False, eos=False) for t in texts]
    assert tok.encode_ordinary_batch(texts) == want
    assert [tok.encode_ordinary(t) for t in texts] == want


@pytest.mark.parametrize("change, message", [
    (lambda d: d["config"].update(default_vocab_size=100), "does not fit"),
    (lambda d: d["config"].pop("pattern"), "config.pattern"),
    (lambda d: d["vocab"][300].update(token_bytes="!!"), r"vocab\[300\].token_bytes is not valid base64"),
    (lambda d: d["vocab"][300].update(rank=7), r"vocab\[300\] must be"),
    (lambda d: d["config"].update(default_num_special_tokens="many"), "default_num_special_tokens"),
])
def test_bad_tekken_files_name_the_problem(tmp_path, change, message):
    doc = {"config": {"pattern": r"\S+|\s+", "default_vocab_size": 1000 + 400, "default_num_special_tokens": 1000},
           "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": ""}
                     for i in range(256)] +
                    [{"rank": 256 + i, "token_bytes": base64.b64encode(b"ab%d" % i).decode(),
                      "token_str": ""} for i in range(144)]}
    path = tmp_path / "tekken_small.json"
    path.write_text(json.dumps(doc))
    assert sqltok.Tokenizer.load(path).n_vocab == 1400
    change(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match=message) as e:
        sqltok.Tokenizer.load(path)
    assert str(path) in str(e.value)
