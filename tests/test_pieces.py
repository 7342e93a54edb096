"""Long documents are cut where nothing counting sees can change: the pieces' pretokens (both
pretokenizers), supermerge candidates and lines equal the whole document's, and counting time
grows linearly with one document's size."""
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import sqltok
from sqltok.pretokenizer._pieces import PRETOKEN_CUTS, pieces_arrow
from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pretokenize_arrow

FRAGMENTS = st.sampled_from([
    " ", "  ", "\n", "\n\n", "\r\n", "\t", " \n", "a", "b", "Ab", "xyz", " the", "it's", "'S", "123", "4567",
    ".", "!?", "/", "(x)", "中", "文", "中文", "日本語", "の", "カ", "ไทย", "é", "e\u0301", "\u0301", "Привет",
    "🙂", "\u00a0", "\u3000", "-", "__init__", "x\ny", "a\nb", "中\n文", "1\na",
])
TEXTS = st.lists(FRAGMENTS, min_size=1, max_size=80).map("".join)


def _pieces(text: str, mode: str, script_aware: bool, size: int) -> list[str]:
    return pieces_arrow(pa.array([text], pa.large_string()), mode, script_aware, size).to_pylist()[0]


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, script_aware=st.booleans(), size=st.integers(1, 12))
@example(text="中 \u0301\na", script_aware=True, size=1)  # a line feed trailing a Han run, kept by a mark
@example(text="中 \u0301!\n\nb c", script_aware=True, size=1)
def test_pieces_pretokenize_as_the_whole(text, script_aware, size):
    pieces = _pieces(text, "pretokens", script_aware, size)
    assert "".join(pieces) == text
    whole = pretokenize_arrow(pa.array([text]), script_aware).to_pylist()[0]
    assert [p for piece in pieces for p in pretokenize_arrow(pa.array([piece]), script_aware).to_pylist()[0]] == whole


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, pattern=st.sampled_from(sorted(PRETOKEN_CUTS)), size=st.integers(1, 12))
@example(text="a\n\nb", pattern="gpt2", size=1)      # GPT-2 leaves the last line feed on its own
@example(text="a \n\nb", pattern="cl100k", size=1)   # cl100k's "\s++$" would take a piece's trailing run
def test_pieces_pretokenize_as_the_whole_in_every_pattern_counting_knows(text, pattern, size):
    script_aware, newline_cuts = PRETOKEN_CUTS[pattern]
    pieces = pieces_arrow(pa.array([text], pa.large_string()), "pretokens", script_aware, size, -1,
                          newline_cuts).to_pylist()[0]
    assert "".join(pieces) == text

    def split(t):
        return pretokenize_arrow(pa.array([t]), pattern=PATTERN_IDS[pattern]).to_pylist()[0]

    assert [p for piece in pieces for p in split(piece)] == split(text)


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, size=st.integers(1, 12))
def test_lines_pieces_hold_whole_lines(text, size):
    pieces = _pieces(text, "lines", True, size)
    assert "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces[:-1])


def test_cut_points_are_found(tmp_path):
    """Pieces stay near the asked size on ordinary text (English, Chinese), so lists stay short."""
    english = "The quick brown fox jumps over the lazy dog. " * 2000
    chinese = "我们的方法在大型语料上很快" * 2000
    for text, aware in ((english, True), (english, False), (chinese, True)):
        pieces = _pieces(text, "pretokens", aware, 1000)
        assert len(pieces) > 50 and max(len(p.encode()) for p in pieces) < 1100


@pytest.fixture(scope="module")
def phase1(tmp_path_factory):
    import duckdb

    con = duckdb.connect()
    sqltok.register(con)
    docs = ["it is one of the best ways to be sure\nand one of the best\n" * 3, "we are\nthe ones\nit is"] * 20
    con.execute("CREATE TABLE docs AS SELECT unnest(?::VARCHAR[]) AS text", [docs])
    sqltok.train_bpe(con, "SELECT text FROM docs", 300, "p1")  # a phase-1 model: candidates need one
    yield con
    con.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(["it", "is", "one", "of", "the", "best", "ways", "to", "be", "sure", "we",
                                        "are", "ones", "\n", " \n", ".", "\n\n"]), max_size=60),
       size=st.integers(1, 10))
def test_candidate_pieces_keep_every_candidate(phase1, words, size):
    text = " ".join(words)
    pieces = _pieces(text, "candidates", True, size)
    assert "".join(pieces) == text
    got = [c for p in pieces for c in phase1.execute("SELECT sqltok_candidates('p1', ?)", [p]).fetchall()[0][0]]
    assert got == phase1.execute("SELECT sqltok_candidates('p1', ?)", [text]).fetchall()[0][0]


def test_one_long_document_trains_as_many_short_ones(tmp_path):
    """A document of many pieces gives the pretoken counts of the same text counted whole."""
    import duckdb

    text = ("Grüße aus Köln! 我们的方法很快。\nThe fox's 12345 jumps—over  the dog.\n" * 3000)
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    con = duckdb.connect()
    sqltok.register(con)
    sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "big.txt"), text_mode="file"), 400, "big")
    counts = dict(con.execute("SELECT pretoken, n FROM sqltok_pretoken_counts('big')").fetchall())
    expected: dict[str, int] = {}
    for p in pretokenize_arrow(pa.array([text]), True).to_pylist()[0]:
        expected[p] = expected.get(p, 0) + 1
    assert counts == expected and len(text.encode()) > 3 * (1 << 16)


def test_a_line_over_the_limit_is_refused(tmp_path, monkeypatch):
    import duckdb

    import sqltok.udfs.pieces as pieces

    monkeypatch.setattr(pieces, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "lines.txt"
    path.write_text("short\n" + "x" * 5000 + "\nshort\n" * 20000, encoding="utf-8")
    con = duckdb.connect()
    sqltok.register(con)
    with pytest.raises(duckdb.Error, match="a line longer than 1,000 bytes"):
        sqltok.train_bpe(con, sqltok.Source(path=str(path), text_mode="line"), 300, "m")
