"""Characters that start out whole when merging (`sqltok/bpe/char_atoms.pxd`) leave every id as
it was: against tiktoken and against the same encoder with atoms off, on the 13-language sample and
on generated text crowded with the characters around which some token covers part of a character
(the "fragments" that forbid an atom at that spot); and atoms are on only where they are exact."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqltok.bpe.tokenizer as bpe_tokenizer
from sqltok import BPETokenizer
from sqltok.bpe._encode import Encoder

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
FILES = ["o200k_base.tiktoken", "cl100k_base.tiktoken", "r50k_base.tiktoken", "whisper_multilingual.tiktoken"]


def sample_lines() -> list[str]:
    return [line for row in SAMPLE.open(encoding="utf-8") for line in json.loads(row)["text"].split("\n") if line]


def fragment_characters(ranks: dict[bytes, int]) -> list[str]:
    """Characters that some token covers in part across their edge, and the characters beside them
    in that token: the places where an atom must not be formed."""
    out = set()
    for token in ranks:
        for cut in (1, 2, 3):
            for piece in (token[cut:], token[:-cut]):
                try:
                    out.update(piece.decode("utf-8"))
                except UnicodeDecodeError:
                    pass
    return sorted(c for c in out if ord(c) >= 0x80)


@pytest.fixture(scope="module", params=FILES)
def encoders(request, bundled):
    """(atoms on, atoms off, tiktoken, fragment characters) for one `.tiktoken` file."""
    from conftest import tiktoken_pair

    path = bundled(request.param)
    on, ref = tiktoken_pair(path)
    original = bpe_tokenizer.Encoder
    bpe_tokenizer.Encoder = functools.partial(Encoder, atoms=False)
    try:
        off = BPETokenizer.load(path)
    finally:
        bpe_tokenizer.Encoder = original
    return on, off, ref, fragment_characters(ref._mergeable_ranks)


def test_atoms_are_on_for_tiktoken_files_and_off_when_asked(encoders):
    on, off, _, _ = encoders
    assert on._encoder.atom_characters > 0
    assert off._encoder.atom_characters == 0


def test_reference_models_merge_from_bytes(golden_dir):
    """A reference model keeps the rank guard: the argument for atoms does not hold there."""
    import gzip

    from sqltok.bpe.reference_file import loads

    model = loads(gzip.decompress((golden_dir / "bpe_en_v8192.model.gz").read_bytes()).decode())
    assert BPETokenizer.from_model(model, "bpe")._encoder.atom_characters == 0


def test_the_sample_encodes_as_tiktoken_and_as_without_atoms(encoders):
    on, off, ref, _ = encoders
    lines = sample_lines()
    want = ref.encode_ordinary_batch(lines)
    assert on.encode_ordinary_batch(lines) == want
    assert [on.encode_ordinary(line) for line in lines] == want
    assert off.encode_ordinary_batch(lines) == want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_text_crowded_with_fragments_encodes_as_tiktoken(encoders, data):
    on, off, ref, fragments = encoders
    common = list("日本語のテキスト한국어ไทยहिन्दीРусский ab,.\n")
    alphabet = st.sampled_from(fragments + common)
    text = data.draw(st.lists(alphabet, max_size=60).map("".join))
    want = ref.encode_ordinary(text)
    assert on.encode_ordinary(text) == want
    assert off.encode_ordinary(text) == want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_raw_bytes_merge_as_tiktoken(encoders, data):
    """`merge_bytes` takes any bytes as one piece: characters cut short, stray continuation and
    lead bytes beside atoms (which then must not form) merge as tiktoken merges them."""
    on, off, ref, fragments = encoders
    pieces = [c.encode("utf-8") for c in fragments[:200] + list("日本語のテキスト한국어ไทย ab")]
    stray = st.integers(0x80, 0xBF).map(lambda c: bytes([c]))  # a continuation byte on its own
    parts = st.one_of(st.sampled_from(pieces), st.sampled_from(pieces).map(lambda b: b[1:]),
                      st.sampled_from(pieces).map(lambda b: b[:-1]), stray, st.binary(min_size=1, max_size=2))
    raw = data.draw(st.lists(parts, min_size=1, max_size=40).map(b"".join).filter(bool))
    want = ref._encode_single_piece(raw)
    assert on._encoder.merge_bytes(raw) == want
    assert off._encoder.merge_bytes(raw) == want


@pytest.mark.parametrize("rank_after, atoms", [(400, 1), (200, 0)])
def test_no_atoms_when_a_merge_uses_a_character_formed_later(rank_after, atoms):
    """é (two bytes) forms at rank 300; "aé" forms from a and é at `rank_after`. Ranked before é's
    own merge, that merge would fire as soon as é is whole, earlier than merging from bytes allows
    for a pre-formed é (condition 2), so the encoder builds no atoms at all."""
    from sqltok.pretokenizer import patterns
    from sqltok.pretokenizer._pretokenize import pattern_id

    tokens = [bytes([b]) for b in range(256)] + ["é".encode(), "aé".encode()]
    pairs = [(0xC3, 0xA9, 300, 256), (ord("a"), 256, rank_after, 257)]
    enc = Encoder(tokens, pairs, list(range(256)), False, pattern_id(patterns.O200K))
    assert enc.atom_characters == atoms


def test_a_stray_continuation_byte_keeps_the_character_before_it_in_bytes(encoders):
    """Έ (CE 88) then a stray AC: o200k has the token 88 AC, which covers part of Έ across its edge
    but is no fragment the edge check looks up for a character of two bytes."""
    on, off, ref, _ = encoders
    raw = b"\xce\x88\xac"
    assert on._encoder.merge_bytes(raw) == off._encoder.merge_bytes(raw) == ref._encode_single_piece(raw)
