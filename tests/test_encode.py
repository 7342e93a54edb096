"""Encoding, decoding and counting with sqltok and reference models, in Python and in SQL."""
from __future__ import annotations

import gzip
import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from sqltok.bpe.reference_file import loads
from sqltok import BPETokenizer


def golden_tokenizer(golden_dir, name: str) -> BPETokenizer:
    return BPETokenizer.from_model(loads(gzip.decompress((golden_dir / f"{name}.model.gz").read_bytes()).decode()), name)


def en_valid(golden_dir) -> list[str]:
    return [json.loads(line)["text"] for line in gzip.open(golden_dir / "en_valid.jsonl.gz", "rt", encoding="utf-8")]


@pytest.mark.parametrize("name", ["bpe_en_simple_v2048", "bpe_en_v8192"])
def test_golden_encodings(golden_dir, name):
    tok = golden_tokenizer(golden_dir, name)
    gold = [list(map(int, line.split())) for line in gzip.open(golden_dir / f"{name}.en_valid.ids.gz", "rt")]
    docs = en_valid(golden_dir)
    assert tok.encode_ordinary_batch(docs) == gold
    assert [tok.encode_ordinary(d) for d in docs[:20]] == gold[:20]
    assert all(tok.decode(ids) == doc for ids, doc in zip(gold, docs))


@pytest.fixture(scope="module")
def trained():
    """A connection with a small model trained on the bundled en_valid documents."""
    from pathlib import Path

    con = duckdb.connect()
    sqltok.register(con)
    path = Path(__file__).parent / "data" / "golden" / "en_valid.jsonl.gz"
    sqltok.train_bpe(con, sqltok.Source(path=str(path)), 1024, "small")
    con.execute(f"CREATE TABLE docs AS SELECT row_number() OVER () AS doc_id, text FROM read_json('{path}')")
    yield con
    con.close()


def test_sql_encode_decode_count_tokens(trained):
    con = trained
    rows = con.execute("SELECT text, encode('small', text), token_count('small', text), "
                       "decode('small', encode('small', text)) FROM docs").fetchall()
    tok = BPETokenizer.from_db(con, "small")
    for text, ids, n, back in rows:
        assert ids == tok.encode_ordinary(text)
        assert n == len(ids)
        assert back == text
    toks = con.execute("SELECT tokens('small', 'Hello world, hello!')").fetchall()[0][0]
    assert "".join(toks) == "Hello world, hello!"
    assert con.execute("SELECT encode('small', NULL), token_count('small', NULL), decode('small', NULL)"
                       ).fetchall()[0] == (None, None, None)


def test_sql_decode_takes_the_id_lists_sqltok_writes(bundled):
    """decode, decode_special and decode_ordinary take INTEGER[], UINTEGER[] (encode_uinteger's: a
    binder error before, DuckDB has no implicit cast to INTEGER[]), USMALLINT[] and BIGINT[], NULL rows
    and empty texts included; an id no vocabulary has is an error naming it."""
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('o200k', ?), sqltok_load('bert', ?)",
                [str(bundled("o200k_base.tiktoken")), str(bundled("bert-base-uncased_tokenizer.json"))])
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('hello world'), (''), (NULL), ('héllo 𝄞 <|endoftext|>')) "
                "v(text)")
    assert con.execute("SELECT bool_and(decode('o200k', encode_uinteger('o200k', text)) IS NOT DISTINCT FROM text), "
                       "bool_and(decode('o200k', encode('o200k', text)::BIGINT[]) IS NOT DISTINCT FROM text) "
                       "FROM t").fetchall() == [(True, True)]
    for m, ids in (("o200k", "encode_uinteger('o200k', text)"), ("bert", "encode_uinteger('bert', text)"),
                   ("bert", "encode_usmallint('bert', text)"), ("bert", "encode('bert', text)::BIGINT[]")):
        for f in ("decode", "decode_special", "decode_ordinary"):
            got = con.execute(f"SELECT {f}('{m}', {ids}), {f}('{m}', encode('{m}', text)) FROM t").fetchall()
            assert all(a == b for a, b in got) and got[2] == (None, None)
    for ids, message in (("[1, 4294967295]::UINTEGER[]", "token id 4294967295 is not in this vocabulary"),
                         ("[1, -1]::BIGINT[]", "token id -1 is out of range"),
                         ("[1, 4294967296]::BIGINT[]", "token id 4294967296 is out of range")):
        with pytest.raises(duckdb.Error, match=message):
            con.execute(f"SELECT decode('o200k', {ids})").fetchall()
    con.close()


def test_update_in_place_and_failed_update_keeps_table(trained):
    con = trained
    con.execute("CREATE TABLE t AS SELECT doc_id, text FROM docs")
    con.execute("ALTER TABLE t ADD COLUMN ids INTEGER[]")
    con.execute("UPDATE t SET ids = encode('small', text)")
    assert con.execute("SELECT bool_and(decode('small', ids) = text) FROM t").fetchall()[0][0]
    before = con.execute("SELECT * FROM t ORDER BY doc_id").fetchall()
    with pytest.raises(duckdb.Error, match="no tokenizer named 'nope'"):
        con.execute("UPDATE t SET ids = encode('nope', text)")
    assert con.execute("SELECT * FROM t ORDER BY doc_id").fetchall() == before


def test_errors(trained):
    con = trained
    with pytest.raises(duckdb.Error, match="token id 999999 is not in this vocabulary"):
        con.execute("SELECT decode('small', [1, 999999])").fetchall()
    with pytest.raises(duckdb.Error, match="loaded: .*small"):
        con.execute("SELECT encode('missing', 'x')").fetchall()
    with pytest.raises(sqltok.SqltokError, match="no such tokenizer file"):
        BPETokenizer.load("/nonexistent/file.tiktoken")


def test_special_tokens_policy(trained):
    tok = BPETokenizer.from_db(trained, "small")
    eot = tok.special_tokens["<|endoftext|>"]
    text = "hi <|endoftext|> there"
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)
    assert eot not in tok.encode(text, disallowed_special=())
    assert tok.encode(text, allowed_special="all").count(eot) == 1
    assert tok.encode(text, allowed_special={"<|endoftext|>"}) == tok.encode(text, allowed_special="all")
    assert tok.encode_ordinary(text) == tok.encode(text, disallowed_special=())
    con = trained
    special, plain = con.execute("SELECT encode_special('small', ?), encode('small', ?)", [text, text]).fetchall()[0]
    assert special.count(eot) == 1 and eot not in plain
    with pytest.raises(duckdb.Error, match="special token"):
        con.execute("SELECT encode_checked('small', ?)", [text]).fetchall()
    assert tok.decode(special) == text


@pytest.mark.parametrize("text", ["a" * 1_000_000, "ab" * 300_000, " " * 200_000, "x" + "é" * 100_000])
def test_long_pretokens_are_fast_and_round_trip(trained, text):
    tok = BPETokenizer.from_db(trained, "small")
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.token_count(text) == len(ids)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_round_trip_any_text(trained, text):
    tok = BPETokenizer.from_db(trained, "small")
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")


def test_batch_threads_agree(golden_dir):
    tok = golden_tokenizer(golden_dir, "bpe_en_v8192")
    docs = en_valid(golden_dir) * 3
    assert tok.encode_ordinary_batch(docs, num_threads=2) == tok.encode_ordinary_batch(docs, num_threads=1)
    import gc

    assert gc.isenabled()  # list output pauses the collector, and only while it builds the lists
    import pyarrow as pa

    texts = pa.array([None if i % 7 == 3 else d for i, d in enumerate(docs)], pa.large_string())
    big = " ".join(docs)  # threads split rows by bytes: a part may be this one row, or no row at all
    for rows in (texts, pa.concat_arrays([pa.array([big], pa.large_string()), texts]),
                 pa.concat_arrays([texts, pa.array([big, None], pa.large_string())])):
        one = tok.encode_arrow(rows, threads=1)
        for threads in (2, 3):  # the threads' ids end up in one buffer, NULL rows stay NULL
            assert tok.encode_arrow(rows, threads=threads).equals(one)
            assert tok.encode_arrow(rows, threads=threads, counts_only=True).equals(
                tok.encode_arrow(rows, threads=1, counts_only=True))


def test_threads_take_over_the_chunks_of_a_slower_one(golden_dir):
    """The first half of the bytes is slow to encode (made-up words: every one is merged), the second
    fast (one word over and over): the thread with the second half takes over chunks from the back of
    the first one's run. The output is in row order all the same, and a row that fails is reported
    as the first one that fails."""
    import random

    import pyarrow as pa

    tok = golden_tokenizer(golden_dir, "bpe_en_v8192")
    rng = random.Random(7)
    slow = [" ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(4, 9)))
                     for _ in range(150)) for _ in range(300)]
    fast = [" the" * (len(slow[0]) // 4)] * 300
    for rows in (slow + fast, fast + slow, slow + [None] + fast):
        texts = pa.array(rows, pa.large_string())
        one = tok.encode_arrow(texts, threads=1)
        for threads in (2, 3):
            assert tok.encode_arrow(texts, threads=threads).equals(one)
            assert tok._encoder.encode_arrow(texts, threads=threads, as_lists=True) == one.to_pylist()
    from sqltok.bpe._encode import Encoder

    no_c3 = Encoder([bytes([b]) for b in range(256)], [], [-1 if b == 0xC3 else b for b in range(256)], True, 0)
    bad = pa.array(slow + ["caf\u00e9"] + fast + ["\u00e9"], pa.large_string())  # no token for byte C3
    for threads in (1, 2, 3):
        for as_lists in (False, True):  # (lists: some rows are lists already when the row fails)
            with pytest.raises(ValueError, match="row 300: the text holds a byte that has no token"):
                no_c3.encode_arrow(bad, threads=threads, as_lists=as_lists)


def test_calls_share_warm_caches_but_not_after_a_failure():
    """Each thread's pretoken cache lives on across calls; a call that fails (here: a byte without a
    token, found while a merge waits in the batch) drops its workspace, so no slot of a pretoken left
    waiting can answer a later call."""
    import pyarrow as pa
    from sqltok.bpe._encode import Encoder

    def encoder():
        tokens = [bytes([b]) for b in range(256)] + [b"qz", b"qzx"]
        byte_ids = [-1 if b == 0xC3 else b for b in range(256)]
        return Encoder(tokens, [(113, 122, 0, 256), (256, 120, 1, 257)], byte_ids, True, 0)

    texts = pa.array(["qzx qzw qzw qzx", None, "zq qzwx"], pa.large_string())
    enc = encoder()
    first = enc.encode_arrow(texts)
    assert first.to_pylist()[0] == [257, 32, 256, 119, 32, 256, 119, 32, 257]
    assert enc.encode_arrow(texts).equals(first)  # warm cache, same ids
    with pytest.raises(sqltok.SqltokError, match="no token in this vocabulary"):
        enc.encode_arrow(pa.array(["qzw qzw qzv \u00e9"], pa.large_string()))
    assert enc.encode_arrow(pa.array(["qzw qzv"], pa.large_string())).to_pylist() == [[256, 119, 32, 256, 118]]
    assert enc.encode_arrow(texts).equals(encoder().encode_arrow(texts))
