"""`sqltok_load` reads files as DuckDB's own readers may (its file-access settings), only regular
files of bounded size, and never echoes what a file holds in its errors."""
import shutil

import duckdb
import pytest

import sqltok
from sqltok.formats import files


@pytest.fixture()
def tok_dir(tmp_path, bundled):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    shutil.copy(bundled("r50k_base.tiktoken"), allowed / "r50k.tiktoken")
    shutil.copy(bundled("gpt2_vocab.json"), allowed / "vocab.json")
    (tmp_path / "merges.txt").write_bytes(bundled("gpt2_merges.txt").read_bytes())  # outside
    return tmp_path


def _load_error(con, *args) -> str:
    with pytest.raises(duckdb.Error) as info:
        con.execute(f"SELECT sqltok_load({', '.join('?' * len(args))})", list(args)).fetchall()
    return str(info.value)


def test_external_access_off_refuses_files(con, tok_dir):
    con.execute("SET enable_external_access = false")
    assert "file-access settings do not allow reading" in _load_error(con, "r", str(tok_dir / "allowed" / "r50k.tiktoken"))


def test_allowed_directories_and_paths(tok_dir):
    allowed = tok_dir / "allowed"
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SET allowed_directories = ?", [[str(allowed)]])
    con.execute("SET allowed_paths = ?", [[str(tok_dir / "one.tiktoken")]])
    shutil.copy(allowed / "r50k.tiktoken", tok_dir / "one.tiktoken")
    shutil.copy(allowed / "r50k.tiktoken", tok_dir / "two.tiktoken")
    con.execute("SET enable_external_access = false")
    assert con.execute("SELECT sqltok_load('r', ?)", [str(allowed / "r50k.tiktoken")]).fetchall() == [("r: 50257 tokens",)]
    assert con.execute("SELECT token_count('r', 'hello world')").fetchall() == [(2,)]
    assert con.execute("SELECT sqltok_load('one', ?)", [str(tok_dir / "one.tiktoken")]).fetchall()
    assert "do not allow reading" in _load_error(con, "two", str(tok_dir / "two.tiktoken"))
    # vocab.json is allowed, the merges.txt beside it (a link out of the folder) is not: companions are checked
    (allowed / "merges.txt").symlink_to(tok_dir / "merges.txt")
    assert "do not allow reading" in _load_error(con, "g", str(allowed / "vocab.json"))


def test_devices_and_huge_files_are_refused(con, tmp_path, monkeypatch):
    assert "not a regular file" in _load_error(con, "z", "/dev/zero")
    big = tmp_path / "big.tiktoken"
    big.write_bytes(b"YQ== 0\n" * 1000)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 4096)
    assert "more than any tokenizer file" in _load_error(con, "b", str(big))


@pytest.mark.parametrize("content", [
    b"SECRET_API_KEY=abc123\n",
    b"user abc123\npassword abc123\n",
    b"YWJjMTIz 0\nQUJD 1\n",
    b"BoundlessBPE v2 word\nabc123\n",
    b'{"abc123": "x"}',
    b'{"model": {"type": "BPE", "vocab": {"abc123": "x"}, "merges": []}}',
])
def test_errors_never_echo_file_content(con, tmp_path, content):
    path = tmp_path / "secret"
    path.write_bytes(content)
    message = _load_error(con, "s", str(path))
    assert "abc123" not in message.replace(str(path), "")
    assert str(path) in message


def test_pattern_argument_for_nonstandard_tiktoken(con, tmp_path, bundled):
    path = tmp_path / "custom.tiktoken"
    path.write_bytes(bundled("r50k_base.tiktoken").read_bytes() + b"YWJjZGVmZ2g= 50257\n")
    assert "pass pattern=" in _load_error(con, "c", str(path))
    con.execute("SELECT sqltok_load('c', ?, pattern := ?)", [str(path), r"\S+|\s+"]).fetchall()
    assert con.execute("SELECT tokens('c', 'abcdefgh abc')").fetchall() == [(["abcdefgh", " ", "abc"],)]


def test_a_pattern_that_is_no_regex_is_a_clear_error(con, tmp_path, bundled):
    """An invalid pre-tokenization pattern, given as pattern= or in a tokenizer.json's Split, is a
    SqltokError naming the tokenizer (it was regex's own error, no ValueError, naming nothing), and
    the pattern itself is not echoed (a file's content)."""
    import json

    from conftest import SHARED_TOKENIZERS

    path = tmp_path / "custom.tiktoken"
    path.write_bytes(bundled("r50k_base.tiktoken").read_bytes() + b"YWJjZGVmZ2g= 50257\n")
    with pytest.raises(sqltok.SqltokError, match="'c': its pre-tokenization pattern is not a regular expression"):
        sqltok.Tokenizer.load(path, name="c", pattern="(abc123")
    message = _load_error(con, "c", str(path), "(abc123")
    assert "pattern is not a regular expression" in message and "abc123" not in message
    if not SHARED_TOKENIZERS.is_dir():
        pytest.skip("../shared/fixtures not present")
    doc = json.loads((SHARED_TOKENIZERS / "llama3" / "tokenizer.json").read_text(encoding="utf-8"))
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(abc123"
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    message = _load_error(con, "j", str(tmp_path / "tokenizer.json"))
    assert "pattern is not a regular expression" in message and "abc123" not in message


def test_load_null_gives_null_and_names_are_checked(con, bundled):
    assert con.execute("SELECT sqltok_load(NULL, ?)", [str(bundled("r50k_base.tiktoken"))]).fetchall() == [(None,)]
    assert "without NUL bytes" in _load_error(con, "a\0b", str(bundled("r50k_base.tiktoken")))


def test_load_does_not_hide_a_stored_model(con, bundled):
    sqltok.train_bpe(con, "SELECT 'hello world hello' AS text", 260, "stored")
    assert "is stored in this database" in _load_error(con, "stored", str(bundled("r50k_base.tiktoken")))
    assert con.execute("SELECT sqltok_load('other', ?)", [str(bundled("r50k_base.tiktoken"))]).fetchall()
