"""The merges read from a tiktoken-style vocabulary (`_concatenations.concatenation_pairs`) against
the plain definition: every token, every split point where both halves are tokens, by rank then
split point."""
import base64

from hypothesis import given, settings, strategies as st
import pytest

from sqltok.bpe._concatenations import concatenation_pairs


def _pairs(tokens: list) -> list:
    ids = {t: i for i, t in enumerate(tokens) if t is not None}
    return [(ids[t[:k]], ids[t[k:]], i, i) for i, t in enumerate(tokens) if t is not None
            for k in range(1, len(t)) if t[:k] in ids and t[k:] in ids]


@pytest.mark.parametrize("name", ["cl100k_base.tiktoken", "o200k_base.tiktoken", "r50k_base.tiktoken"])
def test_real_vocabularies(bundled, name):
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in
             (line.split() for line in bundled(name).read_bytes().splitlines())}
    tokens = [None] * (max(ranks.values()) + 1)
    for token, rank in ranks.items():
        tokens[rank] = token
    got = concatenation_pairs(tokens)
    assert got == _pairs(tokens) and len(got) > len(ranks)


@given(st.lists(st.one_of(st.none(), st.text(alphabet="abc", min_size=2, max_size=30).map(str.encode)),
                max_size=80, unique=True))
@settings(max_examples=200, deadline=None)
def test_any_vocabulary(drawn):
    """Tokens of a small alphabet, so that most split several ways, short and long (within and
    beyond the 11 bytes the table keeps in a slot), with gaps (None)."""
    tokens = [b"a", b"b", b"c"] + drawn
    assert concatenation_pairs(tokens) == _pairs(tokens)
