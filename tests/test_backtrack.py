"""Backtracking BPE (`sqltok/bpe/backtrack.pxd`) gives the merge loop's ids: on random vocabularies
against a plain merge loop in Python, and on o200k / cl100k against the encoder's own merge loop."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqltok.bpe._encode import Encoder
from sqltok.bpe.tiktoken_file import read_tiktoken
from sqltok.pretokenizer._pretokenize import pattern_id

from conftest import SHARED_TOKENIZERS

CORPORA = SHARED_TOKENIZERS.parent / "corpora"
SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
ALPHABET = b"abc \xc3\xa9"  # few bytes, so that random merges build long tokens


def merge_loop(tokens: list[bytes], pairs: list[tuple[int, int, int, int]], piece: bytes) -> list[int]:
    """The oracle: merge the adjacent pair of lowest rank, leftmost on ties, until none is in `pairs`."""
    ranks = {(a, b): (rank, result) for a, b, rank, result in pairs}
    ids = [tokens.index(bytes([c])) for c in piece]
    while len(ids) > 1:
        found = [(ranks[(a, b)][0], i) for i, (a, b) in enumerate(zip(ids, ids[1:])) if (a, b) in ranks]
        if not found:
            break
        _, i = min(found)
        ids[i:i + 2] = [ranks[(ids[i], ids[i + 1])][1]]
    return ids


@st.composite
def trained_vocabularies(draw, alphabet=ALPHABET):
    """Tokens and merges as a trainer makes them: each merge joins two existing tokens into a new one
    at the next rank (HF style: ranks are merge numbers, a token's bytes may merge another way)."""
    tokens = [bytes([c]) for c in alphabet]
    pairs = []
    for _ in range(draw(st.integers(0, 60))):
        a = draw(st.integers(0, len(tokens) - 1))
        b = draw(st.integers(0, len(tokens) - 1))
        if tokens[a] + tokens[b] in tokens or len(tokens[a] + tokens[b]) > 12:
            continue
        pairs.append((a, b, len(pairs), len(tokens)))
        tokens.append(tokens[a] + tokens[b])
    return tokens, pairs


def encoders(tokens, pairs, direct=False, **options):
    """The same vocabulary with backtracking from one byte on, and without it."""
    byte_ids = [-1] * 256
    for c in range(256):
        if bytes([c]) in tokens:
            byte_ids[c] = tokens.index(bytes([c]))
    return (Encoder(tokens, pairs, byte_ids, direct, -1, backtrack_from=1, **options),
            Encoder(tokens, pairs, byte_ids, direct, -1, backtrack_from=-1, **options))


@settings(max_examples=300, deadline=None)
@given(vocab=trained_vocabularies(), pieces=st.lists(st.binary(min_size=1, max_size=40).map(
    lambda b: bytes(ALPHABET[c % len(ALPHABET)] for c in b)), min_size=1, max_size=8))
def test_random_vocabularies_equal_the_merge_loop(vocab, pieces):
    tokens, pairs = vocab
    back, loop = encoders(tokens, pairs)
    assert back.backtrack_from == 1  # a trainer's merges always qualify
    for piece in pieces:
        expected = merge_loop(tokens, pairs, piece)
        assert back.merge_bytes(piece) == expected
        assert loop.merge_bytes(piece) == expected
    arr = pa.array([p.decode("utf-8", "ignore") for p in pieces])
    assert back.encode_arrow(arr).equals(loop.encode_arrow(arr))


@settings(max_examples=300, deadline=None)
@given(vocab=trained_vocabularies(b"ab"), pieces=st.lists(st.text("ab", min_size=1, max_size=30), min_size=1, max_size=8))
def test_runs_of_two_letters_equal_the_merge_loop(vocab, pieces):
    """Runs of equal tokens, where ties of rank decide (leftmost first), in both kernels (the merge
    loop's scan takes four ranks a step: ties within a step, across steps and in its tail)."""
    tokens, pairs = vocab
    back, loop = encoders(tokens, pairs)
    for piece in pieces:
        expected = merge_loop(tokens, pairs, piece.encode())
        assert back.merge_bytes(piece.encode()) == expected
        assert loop.merge_bytes(piece.encode()) == expected


@settings(max_examples=100, deadline=None)
@given(vocab=trained_vocabularies(), data=st.data())
def test_merges_that_form_a_token_before_its_parts_fall_back(vocab, data):
    """Ranks shuffled: a token may form before its parts, where backtracking is not exact."""
    tokens, pairs = vocab
    ranks = data.draw(st.permutations(range(len(pairs))))
    pairs = [(a, b, ranks[r], t) for a, b, r, t in pairs]
    back, loop = encoders(tokens, pairs)
    piece = data.draw(st.binary(min_size=1, max_size=40).map(lambda b: bytes(ALPHABET[c % len(ALPHABET)] for c in b)))
    assert back.merge_bytes(piece) == loop.merge_bytes(piece) == merge_loop(tokens, pairs, piece)


def test_shuffled_ranks_disable_backtracking():
    tokens = [b"a", b"b", b"ab", b"abb"]
    byte_ids = [-1] * 256
    byte_ids[ord("a")], byte_ids[ord("b")] = 0, 1
    ordered = Encoder(tokens, [(0, 1, 0, 2), (2, 1, 1, 3)], byte_ids, False, -1, backtrack_from=1)
    shuffled = Encoder(tokens, [(0, 1, 1, 2), (2, 1, 0, 3)], byte_ids, False, -1, backtrack_from=1)
    guarded = Encoder(tokens, [(0, 1, 0, 2), (2, 1, 1, 3)], byte_ids, False, -1, rank_guard=True, backtrack_from=1)
    assert (ordered.backtrack_from, shuffled.backtrack_from, guarded.backtrack_from) == (1, -1, -1)


def test_a_byte_without_token_still_fails():
    tokens = [b"a", b"b", b"ab"]
    byte_ids = [-1] * 256
    byte_ids[ord("a")], byte_ids[ord("b")] = 0, 1
    back = Encoder(tokens, [(0, 1, 0, 2)], byte_ids, False, -1, backtrack_from=1)
    assert back.merge_bytes(b"abab") == [2, 2]
    with pytest.raises(Exception, match="has no token"):
        back.merge_bytes(b"abcab")


def fixture_texts() -> list[str]:
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for path in sorted(CORPORA.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        texts += [json.loads(line)["text"] for line in lines[:40]]
    return texts


@pytest.fixture(scope="module", params=["o200k_base", "cl100k_base"])
def real_encoders(request):
    spec = read_tiktoken(SHARED_TOKENIZERS / request.param / f"{request.param}.tiktoken")
    pid = pattern_id(spec.pattern)
    return [Encoder(spec.tokens, spec.pairs, spec.byte_ids, spec.direct, pid, backtrack_from=b) for b in (1, -1)]


def test_tiktoken_vocabularies_qualify_and_agree_on_fixture_text(real_encoders):
    back, loop = real_encoders
    assert back.backtrack_from == 1
    texts = pa.array(fixture_texts())
    assert back.encode_arrow(texts).equals(loop.encode_arrow(texts))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(piece=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).map(str.encode))
def test_tiktoken_vocabularies_agree_on_any_bytes(real_encoders, piece):
    back, loop = real_encoders
    assert back.merge_bytes(piece) == loop.merge_bytes(piece)
