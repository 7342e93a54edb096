"""Every SQL function that takes a tokenizer (or a normalization form) is right for any mix of names
and NULLs within one batch: each row equals the same call made on its own."""
import duckdb
import pytest

import sqltok

ROWS = ["Hello world, it's 2026!", "", None, "Grüße <|endoftext|> 世界", "def f(x):\n    return x",
        "naïve café", "Straße"] * 40  # 280 rows: one batch, several runs of each name


@pytest.fixture(scope="module")
def mixed(bundled):
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('o200k', ?), sqltok_load('cl100k', ?), sqltok_load('bert', ?), "
                "sqltok_load('r50k', ?)",
                [str(bundled("o200k_base.tiktoken")), str(bundled("cl100k_base.tiktoken")),
                 str(bundled("bert-base-uncased_tokenizer.json")), str(bundled("r50k_base.tiktoken"))])
    con.execute("CREATE TABLE docs AS SELECT i, t AS text FROM unnest(?) WITH ORDINALITY AS u(t, i)", [ROWS])
    names = ["o200k", "cl100k", None, "bert", "o200k"]
    con.execute("CREATE TABLE which AS SELECT i, ?[(i % 5) + 1] AS m FROM docs", [names])
    con.execute("CREATE TABLE small AS SELECT i, ['r50k', NULL, 'bert'][(i % 3) + 1] AS m FROM docs")
    con.execute("CREATE TABLE forms AS SELECT i, ['NFC', 'NFKD', NULL, 'NFD'][(i % 4) + 1] AS f FROM docs")
    yield con
    con.close()


def _each_row_alone(con, expr: str, table: str = "which", key: str = "m"):
    """(batch result, row-by-row result) of `expr` over docs joined with the name column."""
    batch = con.execute(f"SELECT {expr} FROM docs JOIN {table} USING (i) ORDER BY i").fetchall()
    rows = con.execute(f"SELECT text, {key} FROM docs JOIN {table} USING (i) ORDER BY i").fetchall()
    alone = [con.execute(f"SELECT {expr} FROM (SELECT ?::VARCHAR AS text, ?::VARCHAR AS {key})", list(r)).fetchall()[0]
             for r in rows]
    return batch, alone


@pytest.mark.parametrize("expr", [
    "encode(m, text)", "encode_special(m, text)", "token_count(m, text)", "tokens(m, text)", "token_bytes(m, text)",
    "encode_uinteger(m, text)", "decode(m, encode(m, text))", "decode_special(m, encode_special(m, text))",
    "decode_ordinary(m, encode_special(m, text))",
])
def test_mixed_tokenizers_in_one_batch(mixed, expr):
    batch, alone = _each_row_alone(mixed, expr)
    assert batch == alone
    assert any(r[0] is not None for r in batch) and any(r[0] is None for r in batch)


def test_narrow_ids_mixed(mixed):
    """USMALLINT[] for the vocabularies that fit (r50k, BERT), NULL model rows NULL."""
    batch, alone = _each_row_alone(mixed, "encode_usmallint(m, text)", "small")
    assert batch == alone
    assert any(r[0] is not None for r in batch) and any(r[0] is None for r in batch)


def test_encode_checked_mixed(mixed):
    batch, alone = _each_row_alone(mixed, "encode_checked(m, replace(text, '<|endoftext|>', ''))")
    assert batch == alone


def test_encode_checked_names_no_wrong_row(mixed):
    """The error says which special token it met, and no row number: a UDF sees one vector (up to
    2,048 rows) of one model at a time, so the index it knows is not the query's row (it said
    "row 1" for the fourth row here, "row 952" for row 3000)."""
    queries = ["SELECT encode_checked(m, t) FROM (VALUES ('o200k', 'a'), ('r50k', 'b'), ('r50k', 'c'), "
               "('o200k', 'x <|endoftext|>')) v(m, t)",
               "SELECT encode_checked('o200k', CASE WHEN i = 3000 THEN '<|endoftext|>' ELSE 'a' END) "
               "FROM range(5000) r(i)"]
    for query in queries:
        with pytest.raises(duckdb.Error, match="encode_checked: a text holds the special token '<\\|endoftext\\|>'"):
            mixed.execute(query).fetchall()


def test_encode_pair_mixed(mixed):
    mixed.execute("CREATE OR REPLACE TEMP TABLE bert_or_null AS SELECT i, CASE WHEN i % 3 = 0 THEN NULL "
                  "ELSE 'bert' END AS m FROM docs")
    batch, alone = _each_row_alone(mixed, "encode_pair(m, text, 'a question')", "bert_or_null")
    assert batch == alone


def test_normalize_mixed_forms(mixed):
    batch, alone = _each_row_alone(mixed, "normalize(text, f)", "forms", "f")
    assert batch == alone and any(r[0] is None for r in batch)


def test_bert_normalize_mixed_switches(mixed):
    got = mixed.execute("SELECT bert_normalize(text, lowercase := i % 2 = 0) FROM docs ORDER BY i").fetchall()
    want = [(None if t is None else sqltok.bert_normalize(t, lowercase=i % 2 == 0),)
            for i, t in enumerate(ROWS, 1)]
    assert got == want


def test_candidates_mixed(con):
    sqltok.train_bpe(con, "SELECT text FROM (VALUES ('it is one of the best ways to be sure'), "
                     "('one of the best, one of the best')) t(text)", 300, "p")
    batch = con.execute("SELECT sqltok_candidates(m, t) FROM (VALUES ('p', 'one of the best'), (NULL, 'x'), "
                        "('p', 'to be sure')) v(m, t)").fetchall()
    alone = [con.execute("SELECT sqltok_candidates(?, ?)", [m, t]).fetchall()[0]
             for m, t in [("p", "one of the best"), (None, "x"), ("p", "to be sure")]]
    assert batch == alone and batch[1] == (None,)


def test_candidate_keys_give_back_the_candidates(con):
    """Training groups candidates by their keys (int32 bytes) and stores each key's ids: the same
    lists, in the same order, NULL as NULL; a key that is no whole number of ids is an error."""
    sqltok.train_bpe(con, "SELECT text FROM (VALUES ('it is one of the best ways to be sure'), "
                     "('one of the best, one of the best')) t(text)", 300, "p")
    texts = "(VALUES ('one of the best, to be sure'), (NULL), (''), ('x'), ('one of the best')) v(t)"
    lists = con.execute(f"SELECT sqltok_candidates('p', t) FROM {texts}").fetchall()
    keys = con.execute(f"SELECT list_transform(sqltok_candidate_keys('p', t), lambda k: sqltok_candidate_ids(k)) "
                       f"FROM {texts}").fetchall()
    assert keys == lists and any(row[0] for row in lists) and lists[1] == (None,)
    assert con.execute("SELECT sqltok_candidate_ids(NULL::BLOB), sqltok_candidate_ids(''::BLOB)").fetchall() == \
        [(None, [])]
    with pytest.raises(duckdb.Error, match="multiple of 4"):
        con.execute("SELECT sqltok_candidate_ids('abc'::BLOB)").fetchall()


@pytest.mark.parametrize("name, file", [("o200k", "o200k_base.tiktoken"), ("bert", "bert-base-uncased_tokenizer.json")])
def test_decode_special_and_ordinary_are_skip_special_tokens(mixed, bundled, name, file):
    """SQL's decode_special / decode_ordinary give Tokenizer.decode with skip_special_tokens False /
    True (HF-checked in test_hf_api), and decode the family's default, special ids mixed in."""
    tok = sqltok.Tokenizer.load(bundled(file))
    special = sorted(tok.special_tokens.values())[:2]
    ids = [special + tok.encode_ordinary("Hello world") + special[:1], special, [], None]
    got = mixed.execute("SELECT decode(?, x), decode_special(?, x), decode_ordinary(?, x) FROM unnest(?) AS u(x)",
                        [name, name, name, ids]).fetchall()
    want = [(None,) * 3 if x is None else (tok.decode(x), tok.decode(x, skip_special_tokens=False),
                                           tok.decode(x, skip_special_tokens=True)) for x in ids]
    assert got == want
    assert got[0][1] != got[0][2]  # the special tokens' text is there, and then not
