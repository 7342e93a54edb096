"""Exact and near-duplicate detection: signatures and LSH pairs equal to datasketch's MinHash /
MinHashLSH with the same shingle hashes, permutations and bands; clusters by connected components."""
import json
import random
from pathlib import Path

import numpy as np
import pytest
import regex
from datasketch import MinHash, MinHashLSH
from datasketch.lsh import _optimal_param
from hypothesis import given, settings, strategies as st

from sqltok.corpus._minhash import fingerprint_arrow, minhash_arrow, shingle_hashes
from sqltok.corpus.dedup import exact_duplicates, lsh_bands, near_duplicates, permutations

import pyarrow as pa

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def _fnv(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _fold(hashes):
    h = 0xCBF29CE484222325
    for w in hashes:
        h = ((h ^ w) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _fnv_shingles(text, n=5):
    """Independent shingle hashes: White_Space-separated words hashed by FNV-1a 64, n of them folded
    in order, to 32 bits."""
    words = [_fnv(w.encode()) for w in regex.split(r"\p{White_Space}+", text) if w]
    width = min(n, len(words))
    return [(h ^ (h >> 32)) & 0xFFFFFFFF for h in (_fold(words[j:j + width])
                                                 for j in range(len(words) - width + 1 if words else 0))]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab é\u3000\n\t日", max_size=40), st.integers(1, 6))
def test_shingles_match_an_independent_implementation(text, n):
    assert shingle_hashes(text, n) == _fnv_shingles(text, n)


def _datasketch(values, a, b):
    m = MinHash(num_perm=len(a), scheme="affine32", permutations=(a, b), hashfunc=lambda x: x)
    m.update_batch(values)
    return m


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="abc de\n", max_size=60), st.integers(0, 1000))
def test_signature_equals_datasketch(text, seed):
    a, b = permutations(64, seed)
    ours = minhash_arrow(pa.array([text]), a, b)[0]
    assert ours.tolist() == _datasketch(_fnv_shingles(text), a, b).hashvalues.tolist()


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.8, 0.9])
def test_bands_are_the_ones_minhashlsh_chooses(con, threshold):
    assert lsh_bands(con, threshold, 128) == _optimal_param(threshold, 128, 0.5, 0.5)


def _corpus_with_near_copies(seed=3):
    rnd = random.Random(seed)
    docs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    texts = [d["text"] for d in docs if d["lang"] in ("en", "de", "fr", "es", "ru", "el", "code")]
    out = list(texts)
    for t in rnd.sample(texts, 40):  # copies with a few words changed, dropped or added
        words = t.split(" ")
        for _ in range(max(1, len(words) // rnd.choice([10, 20, 50]))):
            i = rnd.randrange(len(words))
            words[i] = rnd.choice(["", "foo", words[i].upper(), words[i] + "s"])
        out.append(" ".join(words))
    out += [texts[0], texts[0].upper()]  # exact copies (the same once lowercased)
    return out


@pytest.fixture(scope="module")
def corpus_table():
    return _corpus_with_near_copies()


def test_near_duplicate_pairs_equal_minhashlsh(con, corpus_table):
    con.execute("CREATE TABLE raw AS SELECT i AS doc_id, t AS text FROM unnest(?) WITH ORDINALITY u(t, i)",
                [corpus_table])
    # DuckDB's lower, not Python's: they differ on Greek final sigma (ΜΙΑΣ: μιασ, μιας)
    texts = dict(con.execute("SELECT doc_id, lower(text) FROM raw").fetchall())
    a, b = permutations(128, 1)
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    sigs = {}
    for i, t in texts.items():
        hashes = _fnv_shingles(t)
        if hashes:
            sigs[i] = _datasketch(hashes, a, b)
            lsh.insert(i, sigs[i])
    want = {(min(i, j), max(i, j)) for i in sigs for j in lsh.query(sigs[i]) if i != j}
    got = set(con.execute("SELECT x, y FROM sqltok_near_duplicate_pairs('SELECT doc_id, text FROM raw', "
                          "threshold := 0.8)").fetchall())
    assert got == want
    assert len(want) >= 15, len(want)


def test_clusters_are_connected_components(con, corpus_table):
    con.execute("CREATE TABLE raw AS SELECT i AS doc_id, t AS text FROM unnest(?) WITH ORDINALITY u(t, i)",
                [corpus_table])
    pairs = con.execute("SELECT x, y FROM sqltok_near_duplicate_pairs('SELECT doc_id, text FROM raw')").fetchall()
    parent = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for x, y in pairs:
        rx, ry = root(x), root(y)
        parent[max(rx, ry)] = min(rx, ry)
    want = {x: root(x) for x in parent}
    rows = near_duplicates(con, "SELECT doc_id, text FROM raw").fetchall()
    assert {d: c for d, c, _ in rows} == want
    assert all(keep == (d == c) for d, c, keep in rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab é日", min_size=1, max_size=5), max_size=6),
       st.lists(st.sampled_from([" ", "\n", "\t ", "\u3000", "  "]), min_size=7, max_size=7))
def test_fingerprints_ignore_only_whitespace_runs(words, spaces):
    spaced = spaces[0].strip(" ") + "".join(w + s for w, s in zip(words, spaces[1:]))
    plain = " ".join(words)
    fp = fingerprint_arrow(pa.array([spaced, plain, plain + "x", None]))
    assert fp[0] == fp[1] and fp[3] == 0
    assert fp[1] != fp[2] or not words


def test_a_chain_of_near_copies_is_one_cluster(con):
    """Each document overlaps the next by 190 of 200 words, the first and the last by 150: a pair
    only through the ones between."""
    words = [f"w{i}" for i in range(300)]
    con.execute("CREATE TABLE chain AS SELECT i AS doc_id, t AS text FROM unnest(?) WITH ORDINALITY u(t, i)",
                [[" ".join(words[10 * i:10 * i + 200]) for i in range(6)]])
    pairs = set(con.execute("SELECT x, y FROM sqltok_near_duplicate_pairs('SELECT * FROM chain')").fetchall())
    assert (1, 6) not in pairs and {(i, i + 1) for i in range(1, 6)} <= pairs
    assert sorted(near_duplicates(con, "SELECT * FROM chain").fetchall()) == [
        (i, 1, i == 1) for i in range(1, 7)]


def test_exact_duplicates_ignore_case_and_spacing(con):
    con.execute("CREATE TABLE raw AS SELECT * FROM (VALUES (1, 'Hello  world'), (2, 'hello world'), "
                "(3, 'other'), (4, NULL), (5, ' HELLO world ')) t(doc_id, text)")
    assert sorted(exact_duplicates(con, "SELECT * FROM raw").fetchall()) == [
        (1, 1, True), (2, 1, False), (5, 1, False)]


def test_bad_settings(con):
    with pytest.raises(ValueError, match="between 0 and 1"):
        near_duplicates(con, "SELECT 1 AS doc_id, 'a' AS text", threshold=1.5)
    with pytest.raises(ValueError, match="num_perm"):
        permutations(0, 1)
