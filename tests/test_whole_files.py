"""Whole-file documents read in chunks into pieces (`sqltok.training.whole_files`): the pieces tile
the file, and counting them gives the whole document's pretokens and candidates, whatever the chunk
size; invalid UTF-8 is named with its byte offset in the file."""
import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import sqltok
import sqltok.training.whole_files as whole_files
from sqltok.pretokenizer._pretokenize import pretokenize_arrow
from sqltok.training.whole_files import stage_whole_files

WORDS = ["it", "is", "one", "of", "the", "best", " ", "  ", "\n", "\n\n", "\r\n", "Grüße", "我们的方法",
         "12345", "—", "'s", "🙂", "x" * 40, ".\nThe", "\nα"]


def _stage(tmp_path, data: bytes, chunk: int, name: str = "doc.txt") -> tuple[list[str], object]:
    path = tmp_path / name
    path.write_bytes(data)
    con = duckdb.connect()
    corpus = stage_whole_files(con, sqltok.Source(path=str(path), text_mode="file"), "staged", chunk)
    return [r[0] for r in con.execute(corpus.query).fetchall()], corpus.stats


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=80), chunk=st.integers(1, 40),
       piece=st.integers(1, 30))
def test_pieces_tile_the_file_and_keep_its_pretokens(tmp_path, monkeypatch, words, chunk, piece):
    monkeypatch.setattr(whole_files, "PIECE_BYTES", piece)
    text = "".join(words)
    pieces, stats = _stage(tmp_path, text.encode(), chunk)
    assert "".join(pieces) == text and stats.bytes == len(text.encode()) and stats.documents == 1
    for aware in (True, False):
        got = [p for row in pretokenize_arrow(pa.array(pieces), aware).to_pylist() for p in row]
        assert got == pretokenize_arrow(pa.array([text]), aware).to_pylist()[0]
    # every cut is one "candidates" cut point: a line feed, then an ASCII letter
    assert all(a.endswith("\n") and b[:1].isascii() and b[:1].isalpha() for a, b in zip(pieces, pieces[1:]))


def test_a_document_without_cut_points_is_one_piece(tmp_path):
    pieces, _ = _stage(tmp_path, ("1234567890 " * 1000).encode(), 64)
    assert pieces == ["1234567890 " * 1000]


def test_invalid_utf8_is_named_by_its_byte(tmp_path):
    data = b"good text\nmore text\n" * 50 + b"\xff" + b"tail\n"
    with pytest.raises(sqltok.CorpusError, match=r"doc\.txt is not valid UTF-8 at byte 1000"):
        _stage(tmp_path, data, 64)
    with pytest.raises(sqltok.CorpusError, match="at byte 4"):
        _stage(tmp_path, "äö".encode() + b"\xc3", 2)  # a character cut short by the end of the file


def test_files_are_documents_and_empty_ones_are_counted(tmp_path):
    for name, text in (("a.txt", "first file\nAnd more"), ("b.txt", ""), ("c.txt", "third")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    con = duckdb.connect()
    corpus = stage_whole_files(con, sqltok.Source(path=str(tmp_path / "*.txt"), text_mode="file"), "staged")
    assert (corpus.stats.documents, corpus.stats.empty_documents, corpus.stats.bytes) == (2, 1, 24)
    assert [r[0] for r in con.execute(corpus.query).fetchall()] == ["first file\nAnd more", "third"]
    limited = stage_whole_files(con, sqltok.Source(path=str(tmp_path / "*.txt"), text_mode="file",
                                                   max_documents=1), "staged2")
    assert limited.stats.documents == 1 and limited.stats.bytes == 19


def test_training_on_a_whole_file_leaves_no_work_table(tmp_path, con):
    (tmp_path / "doc.txt").write_text("the cat sat on the mat\nThe end\n" * 200, encoding="utf-8")
    sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "doc.txt"), text_mode="file"), 270, "m")
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '__sqltok_%'").fetchall() == [(0,)]
    assert con.execute("SELECT documents FROM sqltok_store.models").fetchall() == [(1,)]
