"""SQL `token_bytes(model, text)`: each token's exact bytes (BLOB[]), where `tokens` shows a token
that is not UTF-8 on its own as U+FFFD."""
import duckdb
import pytest

import sqltok

TEXTS = ["héllo 𝄞 世界 🙂👍🏽", "plain ascii", "", "Grüße <|endoftext|>"]


@pytest.fixture(scope="module")
def loaded(bundled):
    """(connection with 'r50k' and 'bert' loaded, the r50k tokenizer)."""
    path = str(bundled("r50k_base.tiktoken"))
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('r50k', ?), sqltok_load('bert', ?)",
                [path, str(bundled("bert-base-uncased_tokenizer.json"))]).fetchall()
    yield con, sqltok.Tokenizer.load(path)
    con.close()


def test_token_bytes_are_the_tokens_exact_bytes(loaded):
    con, tok = loaded
    for text in TEXTS:
        got, shown = con.execute("SELECT token_bytes('r50k', ?), tokens('r50k', ?)", [text, text]).fetchone()
        assert got == tok.decode_tokens_bytes(tok.encode_ordinary(text))
        assert b"".join(got) == text.encode()
        assert shown == [b.decode("utf-8", "replace") for b in got]
    assert con.execute("SELECT typeof(token_bytes('r50k', 'x'))").fetchone() == ("BLOB[]",)
    assert any("\ufffd" in s for s in con.execute("SELECT tokens('r50k', ?)", [TEXTS[0]]).fetchone()[0])


def test_token_bytes_of_wordpiece_and_nulls(loaded):
    con, _ = loaded
    got = con.execute("SELECT token_bytes('bert', 'Du côté'), token_bytes(NULL, 'x'), "
                      "token_bytes('bert', NULL)").fetchone()
    assert got == ([b"[CLS]", b"du", b"cote", b"[SEP]"], None, None)
