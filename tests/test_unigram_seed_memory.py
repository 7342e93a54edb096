"""Unigram training's memory-saving steps give what the textbook steps give: the permuted LCP array
(uint16, capped, in parts) against pydivsufsort's Kasai LCP, the connection's and pyarrow's allocator settings
restored after a run, jemalloc's purge accepted, the distinct sentences grouped as a dict groups them and
the unknown characters marked in buffers measured first."""
import ctypes

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st
from pydivsufsort import divsufsort, kasai

from sqltok import freed_memory
from sqltok.freed_memory import release_freed_memory, returning_freed_memory
from sqltok.unigram._characters import mark_unknown
from sqltok.unigram._seeds import permuted_lcp
from sqltok.unigram.sentences import distinct_sentences


def _check(data: bytes) -> None:
    text = np.frombuffer(bytearray(data), dtype=np.uint8)
    sa = divsufsort(text)
    lcp = kasai(text, sa)  # lcp[i]: the common prefix of the suffixes sa[i] and sa[i + 1]
    for cap, chunk in ((0xFFFF, 0), (0xFFFF, 7), (3, 0), (1, 5), (65, 64)):  # one part or several
        plcp = permuted_lcp(text, sa, cap, chunk)
        assert plcp[sa[0]] == 0
        assert plcp[sa[1:]].tolist() == np.minimum(lcp[:-1], cap).tolist()


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=300))
def test_permuted_lcp_equals_kasai(data):
    _check(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"ab", b"\x00", b"ba", b"aaa"]), min_size=1, max_size=80))
def test_permuted_lcp_on_repetitive_text(parts):
    _check(b"".join(parts))


def test_permuted_lcp_of_one_byte_and_long_runs():
    _check(b"x")
    _check(b"a" * 5000 + b"b" + b"a" * 5000)


def test_allocator_settings_restored():
    con = duckdb.connect()
    pool = pa.default_memory_pool()
    for before in (False, True):
        con.execute(f"SET allocator_background_threads = {str(before).lower()}")
        with returning_freed_memory(con):
            assert con.execute("SELECT current_setting('allocator_background_threads')").fetchall() == [(True,)]
            assert pa.default_memory_pool().backend_name == "system"
            release_freed_memory()
        assert con.execute("SELECT current_setting('allocator_background_threads')").fetchall() == [(before,)]
        assert pa.default_memory_pool().backend_name == pool.backend_name


def test_jemalloc_purge_is_accepted():
    """DuckDB's jemalloc (Linux builds) knows the purge `release_freed_memory` asks for: 0, not ENOENT."""
    if freed_memory._JE_MALLCTL is None:
        pytest.skip("this DuckDB build has no jemalloc")
    assert freed_memory._JE_MALLCTL(freed_memory._PURGE_ALL_ARENAS, None, None, None, ctypes.c_size_t(0)) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "a", "ab", "▁x", "ü", "a"]), st.integers(1, 5)), min_size=1, max_size=40))
def test_distinct_sentences_group_as_a_dict(rows):
    texts, n = [t for t, _ in rows], np.array([k for _, k in rows], dtype=np.int64)
    distinct, counts, index = distinct_sentences(pa.array(texts, pa.large_string()), n)
    expected: dict[str, int] = {}
    for t, k in rows:
        if t:
            expected[t] = expected.get(t, 0) + k
    assert distinct.to_pylist() == list(expected)  # first seen first
    assert counts.to_pylist() == list(expected.values())
    assert index.tolist() == [list(expected).index(t) if t else -1 for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab▁éü中\U0001F600", max_size=12), min_size=1, max_size=20))
def test_mark_unknown_marks_each_character_outside_the_alphabet(texts):
    known = np.zeros(0x110000, dtype=np.uint8)
    known[[ord(c) for c in "a▁é中"]] = 1
    out = mark_unknown(pa.array(texts, pa.large_string()), known)
    assert [b.decode() for b in out.to_pylist()] == ["".join(c if known[ord(c)] else "▅" for c in t) for t in texts]
