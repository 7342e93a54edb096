"""Loaders of real tokenizer files into an EncoderSpec: `.tiktoken` files and HF tokenizer.json.

The spec is checked by a tiny pure-Python encoder written here (lowest-rank adjacent pair first,
leftmost on ties) against tiktoken's `encode_ordinary` / `_encode_single_piece` and HF
`Tokenizer.encode(..., add_special_tokens=False)` / `model.tokenize`. The small real files are
bundled xz-compressed in tests/data/tokenizers (decompressed to a temporary folder: the loaders read
plain files); the big tokenizer.json files are read from ../shared when it is there.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import regex

import sqltok
from sqltok.pretokenizer import patterns
from sqltok.errors import SqltokError
from sqltok.bpe.byte_unicode import bytes_to_unicode_str
from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.bpe.hf_read import read_hf, read_hf_vocab_merges
from sqltok.bpe.tiktoken_file import (
    KNOWN_TIKTOKEN_FILES, WHISPER_LANGUAGES, read_tiktoken, whisper_special_tokens,
)

DATA = Path(__file__).parent / "data" / "tokenizers"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "tokenizers"
CORPUS = Path(__file__).parent / "data" / "corpora_sample.jsonl"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/fixtures/tokenizers not present")

#: The pattern of HF's cl100k conversions and of Llama 3 (non-possessive).
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                  r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

TEXTS = [
    "Hello world! I'm here, you're there; they'll see. DON'T SHOUT, it's 'quoted'.",
    "def f(x):\n\tif x  >=  10_000:\n        return x ** 2  # comment\r\n    return None\n\n\n",
    "Numbers: 1234567890, 3.14159, 2024-01-31, +44 20 7946 0958, ½ ² ③ ٣٤٥ ४५६",
    "   leading spaces, trailing spaces   \n  \n\t\t mixed\u00a0nbsp and\u2003em-space ",
    "Ünïcödé café naïve façade — “smart quotes” … e\u0301 (decomposed) Å",
    "日本語のテキストと中文文本，还有한국어 텍스트도 있습니다。",
    "Русский текст, ελληνικά, עברית, العربية, हिन्दी भाषा, ภาษาไทย, ქართული",
    "Emoji 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ and symbols ∑∫√∞ ≠ ≤ ≥ ©®™ §¶",
    "Special strings as text: <|endoftext|> <|fim_prefix|>x<|endofprompt|> <think>hmm</think>",
    "Ġ literal Ċ chars, byte-level look-alikes ĠĠ and aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "",
    "x",
    " ",
    "\n\n\n",
]


def corpus_texts(per_language: int = 1, max_chars: int = 2500) -> list[str]:
    """A slice of the multilingual sample corpus (13 languages and code)."""
    seen: dict[str, int] = {}
    texts = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if seen.get(row["lang"], 0) < per_language:
            seen[row["lang"]] = seen.get(row["lang"], 0) + 1
            texts.append(row["text"][:max_chars])
    return texts


# ----------------------------------------------------------------------------- the reference encoder


class Reference:
    """Encodes exactly as `EncoderSpec`'s docstring says, as simply as possible."""

    def __init__(self, spec: EncoderSpec) -> None:
        self.spec = spec
        self.table = spec.merge_table()
        self.ids = spec.token_ids()
        self.pattern = regex.compile(spec.pattern)
        self.added = {**spec.special_tokens, **spec.added_tokens}
        # Longest first, so that at the leftmost position the longest string wins (HF: leftmost-longest).
        alternatives = sorted(self.added, key=len, reverse=True)
        self.added_re = regex.compile("|".join(map(regex.escape, alternatives))) if alternatives else None

    def piece(self, data: bytes) -> list[int]:
        """Encode one pretoken."""
        if self.spec.direct and data in self.ids:
            return [self.ids[data]]
        parts = [self.spec.byte_ids[b] for b in data if self.spec.byte_ids[b] != -1]
        while True:
            best = None
            for i in range(len(parts) - 1):
                merge = self.table.get((parts[i], parts[i + 1]))
                if merge is not None and (best is None or merge[0] < best[0]):
                    best = (merge[0], i, merge[1])
            if best is None:
                return parts
            _, i, result = best
            parts[i:i + 2] = [result]

    def pretokens(self, segment: str) -> list[str]:
        out, end = [], 0
        for m in self.pattern.finditer(segment):
            if self.spec.keep_unmatched and m.start() > end:
                out.append(segment[end:m.start()])
            out.append(m.group())
            end = m.end()
        if self.spec.keep_unmatched and end < len(segment):
            out.append(segment[end:])
        return out

    def encode(self, text: str, match_added: bool) -> list[int]:
        segments: list[str | int] = []
        end = 0
        if match_added and self.added_re is not None:
            for m in self.added_re.finditer(text):
                segments += [text[end:m.start()], self.added[m.group()]]
                end = m.end()
        segments.append(text[end:])
        ids: list[int] = []
        for segment in segments:
            if isinstance(segment, int):
                ids.append(segment)
            elif segment:
                for pretoken in self.pretokens(self.spec.normalize(segment)):
                    ids += self.piece(pretoken.encode("utf-8"))
        return ids


def random_pieces(spec: EncoderSpec, n: int, seed: int = 0) -> list[bytes]:
    """Byte strings made of 1-4 random tokens and stray bytes: every kind of merge order."""
    rng = random.Random(seed)
    tokens = [t for t in spec.tokens if t is not None]
    pieces = []
    for _ in range(n):
        parts = [rng.choice(tokens) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            parts.insert(rng.randint(0, len(parts)), bytes([rng.randrange(256)]))
        pieces.append(b"".join(parts))
    return pieces


# ----------------------------------------------------------------------------- files


@pytest.fixture(scope="session")
def tiktoken_module():
    """tiktoken, reading local files without copying them into its download cache."""
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken.load")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")
        yield tiktoken


def tiktoken_encoding(tiktoken, path: Path, spec: EncoderSpec):
    return tiktoken.Encoding(spec.name, pat_str=spec.pattern,
                             mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                             special_tokens=spec.special_tokens)


# ----------------------------------------------------------------------------- tiktoken facts


def test_known_files_match_tiktoken_registry(monkeypatch):
    """Names, patterns, special tokens and hashes are those of tiktoken's own registry."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    hashes = {}

    def fake_load(url, expected_hash=None):
        hashes[url] = expected_hash
        return {}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        hashes.clear()
        made = openai_public.ENCODING_CONSTRUCTORS[name]()
        (sha,) = hashes.values()
        known = KNOWN_TIKTOKEN_FILES[sha]
        assert (known.name, known.pattern) == (name, made["pat_str"])
        assert known.special_tokens == made["special_tokens"]


def test_whisper_special_tokens():
    """As openai-whisper's get_encoding builds them: 1608 specials after the 50257 ranks."""
    tokens = whisper_special_tokens(50257)
    assert len(tokens) == 1608 and len(WHISPER_LANGUAGES) == 100
    assert list(tokens.items())[:3] == [
        ("<|endoftext|>", 50257), ("<|startoftranscript|>", 50258), ("<|en|>", 50259)]
    assert tokens["<|su|>"] == 50357 and "<|yue|>" not in tokens
    assert [tokens[t] for t in ("<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
                                "<|nospeech|>", "<|notimestamps|>", "<|0.00|>", "<|0.02|>", "<|30.00|>")] == \
        [50358, 50359, 50360, 50361, 50362, 50363, 50364, 50365, 51864]
    large_v3 = whisper_special_tokens(50257, num_languages=100)
    assert large_v3["<|yue|>"] == 50358 and large_v3["<|translate|>"] == 50359
    assert max(large_v3.values()) == 51865
    with pytest.raises(SqltokError, match="num_languages"):
        whisper_special_tokens(50257, num_languages=101)


@pytest.mark.parametrize("file, name, n_ids, special", [
    ("r50k_base.tiktoken", "r50k_base", 50257, {"<|endoftext|>": 50256}),
    ("cl100k_base.tiktoken", "cl100k_base", 100277, {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                                                     "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                                     "<|endofprompt|>": 100276}),
    ("o200k_base.tiktoken", "o200k_base", 200019, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    ("whisper_multilingual.tiktoken", "whisper-multilingual", 51865, None),
])
def test_read_tiktoken_recognizes_standard_files(bundled, file, name, n_ids, special):
    spec = read_tiktoken(bundled(file))
    spec.validate()
    assert (spec.name, spec.n_ids, spec.source) == (name, n_ids, "tiktoken")
    assert (spec.direct, spec.normalizer, spec.keep_unmatched) == (True, None, False)
    assert spec.special_tokens == (special if special is not None else whisper_special_tokens(50257))
    ids = spec.token_ids()
    assert spec.byte_ids == [ids[bytes([b])] for b in range(256)]
    assert all(spec.tokens[i] is None for i in spec.special_tokens.values())
    if name == "whisper-multilingual":
        assert spec.pattern == patterns.GPT2
        assert spec.tokens[50256] is None  # the file's "= 50256": an empty token, reserved rank


def test_read_tiktoken_overrides_and_unknown_files(bundled, tmp_path):
    data = bundled("r50k_base.tiktoken").read_bytes()
    unknown = tmp_path / "mine.tiktoken"
    unknown.write_bytes(data + b"\n")  # other bytes, other sha256
    with pytest.raises(SqltokError, match="pass pattern="):
        read_tiktoken(unknown)
    spec = read_tiktoken(unknown, pattern=r"\S+|\s+")
    assert (spec.name, spec.pattern, spec.special_tokens, spec.n_ids) == ("mine", r"\S+|\s+", {}, 50256)
    spec = read_tiktoken(bundled("r50k_base.tiktoken"), special_tokens={"<|x|>": 50300}, name="gpt2x")
    assert (spec.name, spec.special_tokens, spec.pattern) == ("gpt2x", {"<|x|>": 50300}, KNOWN_TIKTOKEN_FILES[
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"].pattern)
    with pytest.raises(SqltokError, match="the rank of the token"):
        read_tiktoken(bundled("r50k_base.tiktoken"), special_tokens={"<|x|>": 100})


# ----------------------------------------------------------------------------- tiktoken encodings


@pytest.mark.parametrize("file", ["r50k_base.tiktoken", "cl100k_base.tiktoken", "o200k_base.tiktoken",
                                  "whisper_multilingual.tiktoken"])
def test_tiktoken_spec_encodes_like_tiktoken(bundled, tiktoken_module, file):
    path = bundled(file)
    spec = read_tiktoken(path)
    encoding = tiktoken_encoding(tiktoken_module, path, spec)
    ref = Reference(spec)
    for text in TEXTS + corpus_texts():
        assert ref.encode(text, match_added=False) == encoding.encode_ordinary(text), text[:60]
    for piece in random_pieces(spec, 1500):
        assert ref.piece(piece) == encoding._encode_single_piece(piece), piece


def test_tiktoken_pairs_are_every_split(tiktoken_module):
    """The pair list of a tiny encoding, and the merge order it implies, as tiktoken merges."""
    from sqltok.bpe.tiktoken_file import spec_from_ranks

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258, b"cab": 259,
                                                   b"ca": 260, b"cabc": 261, b"bca": 262}
    spec = spec_from_ranks(ranks, r"\S+", {}, "tiny")
    spec.validate()
    a, b, c = ord("a"), ord("b"), ord("c")
    assert spec.pairs[:5] == [(a, b, 256, 256), (b, c, 257, 257), (a, 257, 258, 258), (256, c, 258, 258),
                              (c, 256, 259, 259)]
    ref = Reference(spec)
    assert ref.piece(b"abc") == [258]          # direct
    assert ref.piece(b"ccabc") == [c, 261]     # ab, then ab+c (258) before c+ab (259), then c+abc
    encoding = tiktoken_module.Encoding("tiny", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
    pieces = [bytes(random.Random(n).choice(b"abc") for _ in range(n % 9 + 2)) for n in range(400)]
    for piece in pieces:
        assert ref.piece(piece) == encoding._encode_single_piece(piece), piece


def test_vocabulary_index_tells_near_keys_apart(tiktoken_module):
    """Hundreds of tokens that share their first 8 bytes and length and differ only in bytes 8..10
    (held in the index slot) or after byte 11 (checked against the vocabulary), and tokens of 255
    bytes or more that differ only in length: each is found as itself, and the pieces that are no
    token merge as tiktoken merges them."""
    import itertools

    from sqltok.pretokenizer import patterns
    from sqltok.bpe.tiktoken_file import spec_from_ranks

    stem = "abcdefgh"
    tails = ["".join(t) for t in itertools.product("abcdefghij", repeat=3)]
    words = [stem + t for t in tails[::2]] + [stem + t + "xyz" for t in tails[1::4]] + [stem, stem + "i"]
    longs = ["x" * n for n in range(255, 400, 2)]
    ranks = {bytes([b]): b for b in range(256)}
    for w in words + [" " + w for w in words[::3]] + longs + ["x" * 254]:
        ranks.setdefault(w.encode(), len(ranks))
    tok = sqltok.BPETokenizer.from_spec(spec_from_ranks(ranks, patterns.O200K, {}, "tiny"))
    encoding = tiktoken_module.Encoding("tiny", pat_str=patterns.O200K, mergeable_ranks=ranks, special_tokens={})
    probes = [stem + t for t in tails] + [stem + t + "xyz" for t in tails[::3]]
    probes += ["x" * n for n in range(250, 402)]
    for text in [" ".join(probes[k:k + 50]) for k in range(0, len(probes), 50)] + probes[-160:]:
        assert tok.encode_ordinary(text) == encoding.encode_ordinary(text), text[:40]
    assert tok.encode_ordinary("x" * 301) == [ranks[b"x" * 301]]
    assert tok.encode_ordinary(" " + words[0]) == [ranks[(" " + words[0]).encode()]]


# ----------------------------------------------------------------------------- HF from GPT-2's files


@pytest.fixture(scope="session")
def gpt2_files(bundled):
    return bundled("gpt2_vocab.json"), bundled("gpt2_merges.txt")


def test_gpt2_vocab_merges_equal_r50k_and_encode_like_hf(bundled, gpt2_files):
    tokenizers = pytest.importorskip("tokenizers")
    spec = read_hf_vocab_merges(*gpt2_files)
    spec.validate()
    r50k = read_tiktoken(bundled("r50k_base.tiktoken"))
    # the same tokenizer: vocab.json also holds "<|endoftext|>" as an ordinary entry, 50256
    assert spec.tokens[:50256] == r50k.tokens[:50256] and spec.byte_ids == r50k.byte_ids
    assert spec.tokens[50256] == b"<|endoftext|>" and r50k.tokens[50256] is None
    assert (spec.n_ids, len(spec.pairs), spec.direct) == (50257, 50000, False)
    assert (spec.pattern, spec.keep_unmatched) == (patterns.GPT2, True)
    hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(*map(str, gpt2_files)))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref, ref_r50k = Reference(spec), Reference(r50k)
    for text in TEXTS + corpus_texts():
        ids = ref.encode(text, match_added=False)
        assert ids == hf.encode(text, add_special_tokens=False).ids, text[:60]
        assert ids == ref_r50k.encode(text, match_added=False), text[:60]


# ----------------------------------------------------------------------------- HF tokenizer.json


def hf_json(vocab: dict[str, int], merges: list, **overrides) -> dict:
    """A tokenizer.json document as `tokenizers` 0.23 writes it; `overrides` replace top-level keys,
    `model_<key>` model keys."""
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": False, "vocab": vocab, "merges": merges}
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": byte_level(add_prefix_space=False),
           "post_processor": byte_level(trim_offsets=False),
           "decoder": byte_level(),
           "model": model}
    for key, value in overrides.items():
        if key.startswith("model_"):
            model[key.removeprefix("model_")] = value
        else:
            doc[key] = value
    return doc


def byte_level(add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets,
            "use_regex": use_regex}


def split_then_byte_level(pattern: str, behavior: str, invert: bool) -> dict:
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": invert},
        byte_level(add_prefix_space=False, use_regex=False)]}


def added(content: str, id_: int, special: bool, **flags) -> dict:
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special, **flags}


def check_against_hf(spec: EncoderSpec, hf, texts: list[str], pieces: int = 800) -> None:
    """`spec` encodes `texts` like the HF tokenizer, and random pretokens like its model."""
    ref = Reference(spec)
    for text in texts:
        assert ref.encode(text, match_added=True) == hf.encode(text, add_special_tokens=False).ids, text[:60]
    for piece in random_pieces(spec, pieces):
        expected = [t.id for t in hf.model.tokenize(bytes_to_unicode_str(piece))]
        assert ref.piece(piece) == expected, piece


@pytest.fixture(scope="session")
def gpt2_vocab_merges(gpt2_files):
    vocab = json.loads(gpt2_files[0].read_text(encoding="utf-8"))
    merges = gpt2_files[1].read_text(encoding="utf-8").split("\n")[1:-1]
    return vocab, merges


@pytest.mark.parametrize("variant", ["byte_level", "split_isolated", "split_removed_partial",
                                     "split_isolated_partial"])
def test_hf_json_variants_encode_like_hf(tmp_path, gpt2_vocab_merges, variant):
    """The supported tokenizer.json forms, on GPT-2's real vocabulary and merges."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab, merges = gpt2_vocab_merges
    partial = r"\p{L}+| ?\p{N}+"  # leaves spaces and punctuation unmatched
    doc = {
        "byte_level": lambda: hf_json(vocab, merges, added_tokens=[
            added("<|endoftext|>", 50256, True), added("<think>", 50257, False)]),
        "split_isolated": lambda: hf_json(
            vocab, [m.split(" ") for m in merges],
            pre_tokenizer=split_then_byte_level(LLAMA3_PATTERN, "Isolated", False),
            normalizer={"type": "NFC"}, model_ignore_merges=True,
            added_tokens=[added("<|endoftext|>", 50256, True), added("<think>", 50257, False),
                          added("</think>", 50258, False)]),
        "split_removed_partial": lambda: hf_json(
            vocab, merges, pre_tokenizer=split_then_byte_level(partial, "Removed", True)),
        "split_isolated_partial": lambda: hf_json(
            vocab, merges, pre_tokenizer=split_then_byte_level(partial, "Isolated", False)),
    }[variant]()
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    spec = read_hf(path)
    spec.validate()
    assert spec.name == tmp_path.name and spec.source == "hf"
    expected = {"byte_level": (patterns.GPT2, True, False, None),
                "split_isolated": (LLAMA3_PATTERN, True, True, "NFC"),
                "split_removed_partial": (partial, False, False, None),
                "split_isolated_partial": (partial, True, False, None)}[variant]
    assert (spec.pattern, spec.keep_unmatched, spec.direct, spec.normalizer) == expected
    if variant in ("byte_level", "split_isolated"):
        assert spec.special_tokens == {"<|endoftext|>": 50256} and spec.added_tokens["<think>"] == 50257
    hf = tokenizers.Tokenizer.from_file(str(path))
    check_against_hf(spec, hf, TEXTS + corpus_texts(max_chars=1500), pieces=500)


def byte_vocab() -> dict[str, int]:
    return {bytes_to_unicode_str(bytes([b])): b for b in range(256)}


def test_hf_rules_on_tiny_files(tmp_path):
    """Duplicate merges keep the later rank, missing bytes are dropped, added-token ids are HF's."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    doc = hf_json(vocab, ["b c", "a b", "ab c", "b c"],
                  added_tokens=[added("<x>", 99, True), added("ab", 3, False)])
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.warns(UserWarning, match="'<x>' has id 99 in the file but HF gives it 6"):
        spec = read_hf(path)
    spec.validate()
    assert spec.name == "tiny"
    assert sorted(spec.pairs, key=lambda p: p[2]) == [(0, 1, 1, 3), (3, 2, 2, 5), (1, 2, 3, 4)]
    assert spec.byte_ids.count(-1) == 253
    assert spec.special_tokens == {"<x>": 6} and spec.added_tokens == {"ab": 3}
    hf = tokenizers.Tokenizer.from_file(str(path))
    ref = Reference(spec)
    for text in ["abc", "bcab", "a-b c<x>abc", "xyz", "cab<x>"]:
        assert ref.encode(text, match_added=True) == hf.encode(text, add_special_tokens=False).ids, text


def test_added_token_ids_count_from_the_vocabulary_size_whatever_its_ids(tmp_path):
    """An added token outside the vocabulary gets len(vocab) + k from HF, even after one of the
    vocabulary's above that (cl100k's tokenizer.json with a token added and saved by HF: its
    <|endofprompt|> is 100276 in a vocabulary of 100261); sqltok counted from that one (100277)."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"a": 0, "b": 1, "ab": 9}
    doc = hf_json(vocab, ["a b"], added_tokens=[added("ab", 9, True), added("<x>", 10, True), added("<y>", 11, False)])
    path = tmp_path / "gapped.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.warns(UserWarning, match="'<x>' has id 10 in the file but HF gives it 3"):
        spec = read_hf(path)
    assert spec.special_tokens == {"ab": 9, "<x>": 3} and spec.added_tokens == {"<y>": 4}
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert {t: hf.token_to_id(t) for t in ("ab", "<x>", "<y>")} == {"ab": 9, "<x>": 3, "<y>": 4}
    for text in ["ab<x>a<y>b", "<y><x>ab"]:
        assert Reference(spec).encode(text, match_added=True) == hf.encode(text, add_special_tokens=False).ids


# ----------------------------------------------------------------------------- real tokenizer.json files


@needs_shared
@pytest.mark.parametrize("folder", ["cl100k_base", "o200k_base", "llama3", "qwen3"])
def test_real_tokenizer_json_encodes_like_hf(folder):
    tokenizers = pytest.importorskip("tokenizers")
    path = SHARED / folder / "tokenizer.json"
    spec = read_hf(path)
    spec.validate()
    assert spec.name == folder and spec.source == "hf"
    facts = {
        "cl100k_base": (False, None, False, 5, 0),
        "o200k_base": (False, None, False, 2, 0),
        "llama3": (True, None, True, 256, 0),
        "qwen3": (False, "NFC", True, 14, 12),
    }[folder]
    assert (spec.direct, spec.normalizer, spec.keep_unmatched,
            len(spec.special_tokens), len(spec.added_tokens)) == facts
    assert -1 not in spec.byte_ids
    if folder == "qwen3":
        assert spec.added_tokens["<think>"] == 151667 and spec.special_tokens["<|im_start|>"] == 151644
    check_against_hf(spec, tokenizers.Tokenizer.from_file(str(path)), TEXTS + corpus_texts(), pieces=600)


@needs_shared
def test_bert_is_wordpiece():
    with pytest.raises(UnsupportedTokenizerError, match=r"model type WordPiece is not byte-level BPE: "
                                                         r"Tokenizer\.load reads it as a WordPieceTokenizer"):
        read_hf(SHARED / "bert-base-uncased" / "tokenizer.json")
    assert isinstance(sqltok.Tokenizer.load(SHARED / "bert-base-uncased" / "tokenizer.json"), sqltok.WordPieceTokenizer)


# ----------------------------------------------------------------------------- refusals and corrupt files


UNSUPPORTED = [
    ({"model_type": "WordPiece"}, "model type WordPiece is not byte-level BPE"),
    ({"model_type": "Unigram"}, "model type Unigram is not supported yet"),
    ({"model_byte_fallback": True}, "model.byte_fallback true"),
    ({"model_dropout": 0.1}, "model.dropout 0.1"),
    ({"model_continuing_subword_prefix": "##"}, "model.continuing_subword_prefix '##'"),
    ({"model_end_of_word_suffix": "</w>"}, "model.end_of_word_suffix '</w>'"),
    ({"normalizer": {"type": "Lowercase"}}, "normalizer Lowercase"),
    ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}},
     "normalizer Sequence[NFC, Lowercase]"),
    ({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}},
     "pre_tokenizer Metaspace"),
    ({"pre_tokenizer": {"type": "BertPreTokenizer"}}, "pre_tokenizer BertPreTokenizer"),
    ({"pre_tokenizer": None}, "pre_tokenizer null"),
    ({"pre_tokenizer": byte_level()}, "ByteLevel add_prefix_space true"),
    ({"pre_tokenizer": byte_level(add_prefix_space=False, use_regex=False)}, "use_regex false and no Split"),
    ({"pre_tokenizer": split_then_byte_level(r"\s+", "Removed", False)},
     "Split with behavior Removed and invert false"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Isolated", "invert": False},
        byte_level(add_prefix_space=True, use_regex=False)]}}, "ByteLevel add_prefix_space true"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False},
        byte_level(add_prefix_space=False, use_regex=False)]}}, "Split with pattern"),
    ({"post_processor": {"type": "TemplateProcessing", "single": [
        {"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [], "special_tokens": {}}}, "post_processor TemplateProcessing adds <s> around the text"),
    ({"truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0}}, "truncation is set"),
    ({"normalizer": {"type": "NFC"}, "added_tokens": [added("e\u0301", 256, False)]},
     "added token 'e\u0301' with normalized false and a text that NFC changes"),
    ({"added_tokens": [added("Ġx", 256, False)]},
     "added token 'Ġx', whose text HF's ByteLevel decoder turns into other bytes (b' x'"),
]


@pytest.mark.parametrize("overrides, fragment", UNSUPPORTED, ids=[f for _, f in UNSUPPORTED])
def test_unsupported_features_are_named(tmp_path, overrides, fragment):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_json(byte_vocab(), [], **overrides)), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError) as info:
        read_hf(path)
    assert fragment in str(info.value) and str(path) in str(info.value)
    assert isinstance(info.value, ModelFormatError)


def test_unk_token_with_missing_bytes_is_refused(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_json({"a": 0, "<unk>": 1}, [], model_unk_token="<unk>")), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError, match="model.unk_token is set"):
        read_hf(path)


CORRUPT_HF = [
    ('{"model": {"type": "BPE", "vocab": {"a": 0},\n "merges": [}', "line 2 column 13: invalid JSON"),
    (json.dumps(hf_json({"a": 0, "b": 1}, ["a b"])), "merge 0 ('a', 'b'): 'ab' is not in the vocabulary"),
    (json.dumps(hf_json({"a": 0, "ab": 1}, ["a x"])), "merge 0 ('a', 'x'): 'x' is not in the vocabulary"),
    (json.dumps(hf_json({"a": 0, "b": 1, "ab": 2}, ["a b", "a b c"])), "merge 1: expected 'left right'"),
    (json.dumps(hf_json({"a": 0, "b": 0}, [])), "vocabulary entries 0 and 1 have the same id 0"),
    (json.dumps({"vocab": {}}), "expected a JSON object with a 'model' object"),
    # found by fuzz/readers.py: one huge id made the reader allocate gigabytes
    (json.dumps(hf_json({"a": 0, "b": 381777777}, [])), "ids below the largest token id have no token"),
]


@pytest.mark.parametrize("text, fragment", CORRUPT_HF)
def test_corrupt_tokenizer_json(tmp_path, text, fragment):
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFormatError) as info:
        read_hf(path)
    assert not isinstance(info.value, UnsupportedTokenizerError)
    assert fragment in str(info.value)


def test_corrupt_merges_txt(tmp_path, gpt2_files):
    merges = tmp_path / "merges.txt"
    merges.write_text("#version: 0.2\nĠ t\nĠ a\nbad line here\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match=r"merges.txt: line 4: expected a merge 'left right'"):
        read_hf_vocab_merges(gpt2_files[0], merges)
    merges.write_text("#version: 0.2\nĠ t\nĠt zzz\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match=r"merges.txt: line 3: merge 1 \('Ġt', 'zzz'\): 'zzz' is not in the vocabulary"):
        read_hf_vocab_merges(gpt2_files[0], merges)


def tiktoken_lines(extra: bytes) -> bytes:
    import base64
    return b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256)) + extra


CORRUPT_TIKTOKEN = [
    (b"YWI= 256 extra\n", "line 257: expected '<base64 token> <rank>', found 3 fields"),
    (b"YW*= 256\n", "line 257: the token is not valid base64"),
    (b"YWI= -3\n", "line 257: expected a rank (an integer >= 0)"),
    (b"YWI= 2x\n", "line 257: expected a rank"),
    (b"\nYWI= 256\nYWI= 257\n", "line 259: the token is already on line 258"),
    (b"YWI= 256\nYWM= 256\n", "line 258: the rank is already used on line 257"),
    (b"YWI= 381777777\n", "ids below the largest token id have no token"),
]


@pytest.mark.parametrize("extra, fragment", CORRUPT_TIKTOKEN)
def test_corrupt_tiktoken(tmp_path, extra, fragment):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(tiktoken_lines(extra))
    with pytest.raises(ModelFormatError) as info:
        read_tiktoken(path, pattern=r"\S+")
    assert fragment in str(info.value) and str(path) in str(info.value)
    assert extra.split()[-1].decode() not in str(info.value).removeprefix(f"{path}: ")  # no content echoed


def test_tiktoken_missing_bytes_and_empty_file(tmp_path):
    path = tmp_path / "small.tiktoken"
    path.write_bytes(b"YQ== 0\nYg== 1\n")
    with pytest.raises(UnsupportedTokenizerError, match=r"254 single bytes have no token \(0x00, 0x01"):
        read_tiktoken(path, pattern=r"\S+")
    path.write_bytes(b"\n\n")
    with pytest.raises(ModelFormatError, match="no tokens"):
        read_tiktoken(path, pattern=r"\S+")
    # CRLF and blank lines are fine, ranks may have gaps
    path.write_bytes(tiktoken_lines(b"\r\nYWI= 300\r\n"))
    spec = read_tiktoken(path, pattern=r"\S+")
    assert spec.tokens[300] == b"ab" and spec.tokens[299] is None and spec.pairs == [(97, 98, 300, 300)]


@needs_shared
def test_qwen_nfc_is_sqltoks_own_and_equals_hf():
    """Qwen's tokenizer.json normalizes to NFC: sqltok's own normalizer (not pyarrow's or Python's)
    gives HF's ids, on decomposed and compatibility text as well."""
    import unicodedata2

    tokenizers = pytest.importorskip("tokenizers")
    path = SHARED / "qwen3" / "tokenizer.json"
    tok, hf = sqltok.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
    texts = TEXTS + corpus_texts(per_language=2)
    texts += [unicodedata2.normalize(form, t) for form in ("NFD", "NFKD") for t in texts]
    texts += ["e\u0301\u0323 A\u030a \u1100\u1161\u11a8 \u0958 \ufb01 \u212b"]
    assert tok.encode_batch(texts, allowed_special="all") == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
