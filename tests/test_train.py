"""BPE training inside DuckDB: parity with the reference's golden models, the model tables, sources."""
from __future__ import annotations

import gzip
import json
from collections import Counter
from functools import partial

import duckdb
import pyarrow as pa
import pytest

import sqltok
from conftest import arrow_pools_seen
from sqltok.evaluate import compression
from sqltok.bpe.reference_file import dumps
from sqltok.bpe.train import merge_pretokens, merges_model, merges_rows
from sqltok.store import model_rows

GOLDEN_BPE = [  # name, training file, vocab size, simple
    ("bpe_en_simple_v2048", "en_train", 2048, True),
    ("bpe_en_v8192", "en_train", 8192, False),
    ("bpe_en_v7433", "en_train", 7433, False),
    ("bpe_multi_v4096", "multi_train", 4096, False),
]


@pytest.mark.parametrize("name,train,vocab,simple", GOLDEN_BPE)
def test_golden_models_byte_for_byte(con, golden_dir, train_dir, name, train, vocab, simple):
    src = sqltok.Source(path=str(train_dir / f"{train}.jsonl.zst"))
    sqltok.train_bpe(con, src, vocab, name, simple=simple)
    expected = gzip.decompress((golden_dir / f"{name}.model.gz").read_bytes()).decode("utf-8")
    assert dumps(sqltok.load_model(con, name)) == expected


@pytest.mark.parametrize("name,simple", [("bpe_en_simple_v2048", True), ("bpe_en_v8192", False)])
def test_token_counts_on_held_out_match_golden_encodings(con, golden_dir, train_dir, name, simple):
    vocab = int(name.rsplit("_v", 1)[1])
    sqltok.train_bpe(con, sqltok.Source(path=str(train_dir / "en_train.jsonl.zst")), vocab, name, simple=simple)
    ids = gzip.decompress((golden_dir / f"{name}.en_valid.ids.gz").read_bytes()).decode() \
        if (golden_dir / f"{name}.en_valid.ids.gz").exists() else None
    if ids is None:
        pytest.skip("golden encodings of this model are not bundled")
    expected = sum(len(line.split()) for line in ids.splitlines())
    got = compression(con, name, sqltok.Source(path=str(golden_dir / "en_valid.jsonl.gz")))
    assert got["tokens"] == expected


def _model_tables(con) -> dict:
    return {t: con.execute(f"SELECT * FROM sqltok_store.{t} ORDER BY ALL").fetchall()
            for t in ("models", "tokens", "merges", "special_tokens", "pretoken_counts")}


def test_tables_and_macros(con):
    con.execute("CREATE TABLE docs AS SELECT * FROM (VALUES ('low lower lowest'), ('new newer newest'), "
                "(NULL), (''), ('low low low')) t(text)")
    rep = sqltok.train_bpe(con, "SELECT text FROM docs", 260, "m")
    assert (rep.documents, rep.null_documents, rep.empty_documents) == (3, 1, 1)
    counts = dict(con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('m')").fetchall())
    assert counts["low"] == 2 and counts[" low"] == 2 and counts[" lowest"] == 1
    merges = con.execute("SELECT idx, left_token, right_token, token, count FROM sqltok_merges('m')").fetchall()
    assert len(merges) == rep.merges == 13 < 260 - 243  # stopped early: no pair left
    assert rep.vocab_size == 243 + 13
    assert merges[:2] == [(0, b"l", b"o", b"lo", 6), (1, b"lo", b"w", b"low", 6)]
    assert all(m[1] + m[2] == m[3] for m in merges)
    assert [c for *_, c in merges] == sorted((c for *_, c in merges), reverse=True)
    assert con.execute("SELECT id, token FROM sqltok_special_tokens('m')").fetchall() == [(256, "<|endoftext|>")]
    assert con.execute("SELECT count(*) FROM sqltok_tokens('m')").fetchall()[0][0] == 256
    assert con.execute("SELECT model, vocab_size FROM sqltok_models()").fetchall() == [("m", 256)]


def test_pretokenize_in_sql(con):
    got = con.execute("SELECT pretokenize('Hello 世界, it''s 2026!')").fetchall()[0][0]
    assert got == sqltok.pretokenize("Hello 世界, it's 2026!")
    assert "".join(got) == "Hello 世界, it's 2026!"
    simple = con.execute("SELECT pretokenize('Hello 世界', simple := true)").fetchall()[0][0]
    assert simple == sqltok.pretokenize("Hello 世界", script_aware=False)
    assert con.execute("SELECT pretokenize(NULL::VARCHAR)").fetchall()[0][0] is None


def _first_docs_counts(path, n, key="text"):
    from collections import Counter

    c = Counter()
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i == n:
                break
            c.update(sqltok.pretokenize(json.loads(line)[key]))
    return c


@pytest.fixture()
def jsonl(tmp_path):
    docs = [{"body": f"document number {i}: " + "word " * (i % 7), "id": i} for i in range(50)]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def test_sources_jsonl_key_and_first_n_in_file_order(con, jsonl):
    sqltok.train_bpe(con, sqltok.Source(path=str(jsonl), text_key="body", max_documents=10), 300, "m")
    got = dict(con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('m')").fetchall())
    assert got == dict(_first_docs_counts(jsonl, 10, key="body"))


def test_sources_parquet_table_text_and_sql_agree(con, tmp_path):
    texts = ["the cat sat", "on the mat", "the end"]
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 'the cat sat'), (2, 'on the mat'), (3, 'the end')) v(i, body)")
    con.execute(f"COPY (SELECT body AS text FROM t ORDER BY i) TO '{tmp_path / 'c.parquet'}' (FORMAT parquet)")
    (tmp_path / "lines.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    (tmp_path / "crlf.txt").write_text("\r\n".join(texts) + "\r\n", encoding="utf-8", newline="")
    for i, text in enumerate(texts):
        (tmp_path / f"doc{i}.txt").write_text(text, encoding="utf-8")
    sources = {
        "parquet": sqltok.Source(path=str(tmp_path / "c.parquet")),
        "table": sqltok.Source(table="t", text_key="body"),
        "lines": sqltok.Source(path=str(tmp_path / "lines.txt"), text_mode="line"),
        "crlf": sqltok.Source(path=str(tmp_path / "crlf.txt"), text_mode="line"),
        "files": sqltok.Source(path=str(tmp_path / "doc*.txt"), text_mode="file"),
        "sql": sqltok.Source(sql="SELECT body FROM t", text_key="body"),
    }
    results = {}
    for name, src in sources.items():
        sqltok.train_bpe(con, src, 250, name)
        results[name] = con.execute(f"SELECT pretoken, n FROM sqltok_pretoken_counts('{name}') ORDER BY ALL").fetchall()
    assert all(r == results["parquet"] for r in results.values()), results


def test_a_table_source_is_a_name_not_sql(con):
    """Source(table=...) (--table) was pasted into the query: "docs; DROP TABLE keep; ..." dropped `keep`."""
    con.execute("CREATE TABLE docs AS SELECT 'hello world' AS text; CREATE TABLE keep AS SELECT 1 AS x")
    con.execute("CREATE SCHEMA s; CREATE TABLE s.\"odd name\" AS SELECT 'hello there' AS text")
    with pytest.raises(sqltok.CorpusError, match="cannot read the training source"):
        sqltok.train_bpe(con, sqltok.Source(table="docs; DROP TABLE keep; SELECT 'a' AS text"), 250, "m")
    assert con.execute("SELECT x FROM keep").fetchall() == [(1,)]
    assert sqltok.train_bpe(con, sqltok.Source(table="s.odd name"), 250, "m").documents == 1


def test_plain_text_needs_an_explicit_mode(con, tmp_path):
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(sqltok.CorpusError, match="whole file"):
        sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "a.txt")), 300, "m")


def test_blob_documents_valid_and_invalid_utf8(con):
    con.execute("CREATE TABLE b AS SELECT * FROM (VALUES ('ok text'::BLOB), ('caf\\xC3\\xA9'::BLOB)) t(text)")
    sqltok.train_bpe(con, "SELECT text FROM b", 250, "ok")
    assert ("café", 1) in con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('ok')").fetchall() \
        or (" café", 1) in con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('ok')").fetchall()
    con.execute("INSERT INTO b VALUES ('bad \\xFF byte'::BLOB)")
    with pytest.raises(sqltok.CorpusError, match="document 3 .* not valid UTF-8"):
        sqltok.train_bpe(con, "SELECT text FROM b", 250, "bad")
    assert not sqltok.model_names(con) == [] and "bad" not in sqltok.model_names(con)


@pytest.mark.parametrize("vocab,msg", [(242, "at least 243"), (1 << 30, "absurdly large"), ("5", "integer")])
def test_bad_vocab_sizes(con, vocab, msg):
    with pytest.raises(ValueError, match=msg):
        sqltok.train_bpe(con, "SELECT 'x' AS text", vocab, "m")


@pytest.mark.parametrize("train", ["bpe", "boundless"])
@pytest.mark.parametrize("specials,msg", [("<|im|>", "not one string"), (["x", "x"], "given twice"),
                                          ([""], "non-empty")])
def test_bad_special_tokens_are_refused_from_python(con, train, specials, msg):
    """As the CLI refuses them: a string is not split into one special token per character, and a
    duplicate or empty token does not leave a hole in the ids or a model no file can hold."""
    run = sqltok.train_bpe if train == "bpe" else partial(sqltok.train_superword, method="boundless")
    with pytest.raises(sqltok.SqltokError, match=msg):
        run(con, "SELECT 'hello world' AS text", 250, "m", special_tokens=specials)
    assert "m" not in sqltok.model_names(con)


def test_missing_file_unknown_model_existing_name(con, tmp_path):
    with pytest.raises(sqltok.CorpusError, match="no such file"):
        sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "nope.jsonl")), 300, "m")
    with pytest.raises(sqltok.ModelNotFoundError, match="no model named 'ghost'.*models: none"):
        sqltok.load_model(con, "ghost")
    sqltok.train_bpe(con, "SELECT 'aaa bbb' AS text", 245, "m")
    with pytest.raises(sqltok.ModelExistsError, match="replace"):
        sqltok.train_bpe(con, "SELECT 'ccc' AS text", 245, "m")
    sqltok.train_bpe(con, "SELECT 'ccc ddd' AS text", 246, "m", replace=True)
    assert con.execute("SELECT count(*) FROM sqltok_store.tokens WHERE model = 'm'").fetchall()[0][0] == 246
    with pytest.raises(sqltok.CorpusError, match="no non-empty documents"):
        sqltok.train_bpe(con, "SELECT NULL::VARCHAR AS text", 300, "empty")
    with pytest.raises(sqltok.CorpusError, match="cannot read"):
        sqltok.train_bpe(con, "SELECT text FROM no_such_table", 300, "x")


def test_a_file_path_given_as_the_query_says_to_use_source(con, tmp_path):
    """A string source is SQL; a path there gave only DuckDB's 'syntax error at or near "/"'."""
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "hello"}\n', encoding="utf-8")
    with pytest.raises(sqltok.CorpusError, match=r"a string source is a SQL query: give a file as sqltok.Source"):
        sqltok.train_bpe(con, str(path), 250, "m")
    with pytest.raises(sqltok.CorpusError, match=r"cannot read the training source 'SELECT x FROM':"):
        sqltok.train_bpe(con, "SELECT x FROM", 250, "m")


@pytest.mark.parametrize("failure", [KeyboardInterrupt, RuntimeError])
def test_failed_run_leaves_database_as_it_was(con, monkeypatch, failure):
    sqltok.train_bpe(con, "SELECT 'aaa bbb' AS text", 245, "m")
    before = _model_tables(con)
    import sqltok.store as store
    import sqltok.bpe.train as train

    real = store.save_model_rows

    def half_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise failure("stopped half way")

    monkeypatch.setattr(train, "save_model_rows", half_then_fail)
    with pytest.raises(failure):
        sqltok.train_bpe(con, "SELECT 'new words here' AS text", 250, "m", replace=True)
    with pytest.raises(failure):
        sqltok.train_bpe(con, "SELECT 'new words here' AS text", 250, "other")
    assert _model_tables(con) == before


@pytest.mark.parametrize("train", ["bpe", "boundless"])
def test_runs_allocate_arrow_with_malloc_and_give_the_pool_back(con, monkeypatch, train):
    """Arrow's pool is malloc for the run (see `arrow_memory`), and the pool before after it, also
    when the run fails."""
    import sqltok.bpe.superword as superword
    import sqltok.bpe.train as bpe_train
    module = bpe_train if train == "bpe" else superword
    pool = pa.default_memory_pool().backend_name
    seen = arrow_pools_seen(monkeypatch, module, "count_corpus")
    run = sqltok.train_bpe if train == "bpe" else partial(sqltok.train_superword, method="boundless")
    run(con, "SELECT 'the cat sat on the mat' AS text", 260, "m")
    with pytest.raises(sqltok.CorpusError):
        run(con, "SELECT NULL::VARCHAR AS text", 260, "empty")
    assert seen == ["system", "system"]
    assert pa.default_memory_pool().backend_name == pool


def test_progress_is_quiet_unless_asked(con, capsys):
    sqltok.train_bpe(con, "SELECT 'aaa bbb ccc' AS text", 246, "q")
    assert capsys.readouterr().err == ""
    sqltok.train_bpe(con, "SELECT 'aaa bbb ccc' AS text", 246, "p", progress=True)
    assert "merges/s" in capsys.readouterr().err


def test_database_file_persists_models(tmp_path):
    db = str(tmp_path / "work.duckdb")
    with duckdb.connect(db) as c:
        sqltok.register(c)
        sqltok.train_bpe(c, "SELECT 'persist me please' AS text", 250, "p")
    with duckdb.connect(db) as c:
        assert sqltok.model_names(c) == ["p"]
        assert sqltok.load_model(c, "p").vocab_size == 250


def test_merge_loop_rows_are_the_models_rows():
    texts = ["the cat sat on the mat", "le chat est assis sur le tapis", "猫が座った", "1234 + 5678"]
    counts = Counter(p for t in texts * 3 for p in sqltok.pretokenize(t))
    out = merge_pretokens(pa.table({"pretoken": list(counts), "n": pa.array(list(counts.values()), pa.int64())}), 300)
    fast, slow = merges_rows(out, True), model_rows(merges_model(out, True))
    assert fast.tokens.to_pylist() == slow.tokens.to_pylist()
    assert fast.merges.to_pylist() == slow.merges.to_pylist() and fast.merges.num_rows > 20
    assert (fast.method, fast.settings, fast.super_settings, fast.special_tokens) == \
        (slow.method, slow.settings, slow.super_settings, slow.special_tokens)
