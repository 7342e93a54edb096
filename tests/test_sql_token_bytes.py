"""SQL `token_bytes(model, text)`: each token's exact bytes (BLOB[]), where `tokens` shows a token
that is not UTF-8 on its own as U+FFFD."""
import pytest

import sqltok

TEXTS = ["héllo 𝄞 世界 🙂👍🏽", "plain ascii", "", "Grüße <|endoftext|>"]


@pytest.fixture()
def loaded(con, bundled):
    """(connection with 'o200k' and 'bert' loaded, the o200k tokenizer)."""
    path = str(bundled("o200k_base.tiktoken"))
    con.execute("SELECT sqltok_load('o200k', ?), sqltok_load('bert', ?)",
                [path, str(bundled("bert-base-uncased_tokenizer.json"))]).fetchall()
    return con, sqltok.Tokenizer.load(path)


def test_token_bytes_are_the_tokens_exact_bytes(loaded):
    con, tok = loaded
    for text in TEXTS:
        got, shown = con.execute("SELECT token_bytes('o200k', ?), tokens('o200k', ?)", [text, text]).fetchone()
        assert got == tok.decode_tokens_bytes(tok.encode_ordinary(text))
        assert b"".join(got) == text.encode()
        assert shown == [b.decode("utf-8", "replace") for b in got]
    assert con.execute("SELECT typeof(token_bytes('o200k', 'x'))").fetchone() == ("BLOB[]",)
    assert any("\ufffd" in s for s in con.execute("SELECT tokens('o200k', ?)", [TEXTS[0]]).fetchone()[0])


def test_token_bytes_of_wordpiece_and_nulls(loaded):
    con, _ = loaded
    got = con.execute("SELECT token_bytes('bert', 'Du côté'), token_bytes(NULL, 'x'), "
                      "token_bytes('bert', NULL)").fetchone()
    assert got == ([b"[CLS]", b"du", b"cote", b"[SEP]"], None, None)
