"""`sqltok prepare`: the whole pipeline from the command line, its manifest, atomic output and the
errors bad input gets."""
import json
import re
import os
from pathlib import Path

import duckdb
import pytest

import sqltok
from sqltok.cli import main
from sqltok.corpus import prepare as prepare_module
from sqltok.corpus.prepare import Dedup, PrepareSettings, prepare
from sqltok.corpus.sources import Source
from sqltok.errors import SqltokError

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


@pytest.fixture()
def raw(tmp_path):
    """The sample plus copies, PII, NULL and empty documents, as JSONL with a source column."""
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["source"] = "sample"
    extra = [dict(rows[0]), dict(rows[1], text=rows[1]["text"].upper()),
             {"lang": "en", "text": "Write to jane.doe@example.com or call +44 20 7946 0958 today.", "source": "x"},
             {"lang": "en", "text": None, "source": "x"}, {"lang": "en", "text": "", "source": "x"},
             {"lang": "en", "text": "12345 !!!", "source": "x"}]  # no language: passes through balancing
    path = tmp_path / "raw.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows + extra), encoding="utf-8")
    return path


def test_whole_pipeline(raw, tmp_path, capsys):
    out = tmp_path / "prepared"
    assert main(["prepare", str(raw), "--detect-language", "--balance", "en=4,ru=4,fr=1,ko=1", "--mask-pii",
                 "--dedup", "near:0.8", "--normalize", "NFC", "--valid", "0.1", "-o", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["manifest.json", "train.parquet", "valid.parquet"]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".sqltok")]
    m = json.loads((out / "manifest.json").read_text())
    steps = {s["step"]: s for s in m["steps"]}
    assert list(steps) == ["read", "clean", "detect_language", "mask_pii", "dedup_exact", "dedup_near", "balance"]
    assert steps["read"]["documents_out"] == 266 and steps["clean"]["documents_out"] == 264  # NULL and ''
    assert steps["clean"]["null_or_empty"] == 2
    assert m["duplicates_removed"]["exact"] >= 2
    assert m["pii"]["email"] >= 1 and m["pii"]["phone"] >= 1
    for a, b in zip(m["steps"], m["steps"][1:]):
        assert b["documents_in"] == a["documents_out"] and b["bytes_in"] == a["bytes_out"]
    assert set(m["balance"]["asked"]) == {"en", "ru", "fr", "ko"}
    for lang, share in m["balance"]["asked"].items():
        assert m["balance"]["reached"][lang] == pytest.approx(share, abs=0.01)
    assert sum(m["balance"]["reached"].values()) == pytest.approx(1.0)  # among documents with a language
    assert m["sqltok_version"] and m["settings"]["dedup"] == {"exact": True, "near": 0.8}
    assert m["languages_before"] and m["languages_after"]
    assert {x["source"] for x in m["sources"]} == {"sample", "x"}
    assert sum(x["documents"] for x in m["sources"]) == steps["balance"]["documents_out"]
    con = duckdb.connect()
    train = con.execute(f"SELECT count(*), count(DISTINCT source), bool_or(text LIKE '%[EMAIL]%') "
                        f"FROM '{out}/train.parquet'").fetchone()
    valid = con.execute(f"SELECT count(*) FROM '{out}/valid.parquet'").fetchone()[0]
    assert train[0] + valid == steps["balance"]["documents_out"] and train[1] == 2
    assert m["outputs"]["valid"]["documents"] == valid
    printed = capsys.readouterr().out
    assert "asked" in printed and "reached" in printed and "duplicates removed" in printed


def test_temperature_with_the_inputs_languages(raw, tmp_path):
    out = tmp_path / "p"
    assert main(["prepare", str(raw), "--temperature", "0.3", "-o", str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert [s["step"] for s in m["steps"]] == ["read", "clean", "balance"]
    assert "valid" not in m["outputs"]


def test_a_failed_run_leaves_no_output(raw, tmp_path, monkeypatch, capsys):
    out = tmp_path / "p"
    real = prepare_module.balance_query

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(prepare_module, "balance_query", broken)
    assert main(["prepare", str(raw), "--uniform", "--dedup", "exact", "-o", str(out)]) == 130
    assert os.listdir(tmp_path) == ["raw.jsonl"]
    monkeypatch.setattr(prepare_module, "balance_query", real)
    assert main(["prepare", str(raw), "--uniform", "-o", str(out)]) == 0


def test_work_tables_live_in_a_schema_of_their_own(raw, tmp_path):
    con = sqltok.register(duckdb.connect())
    con.execute("CREATE TABLE step0 AS SELECT 42 AS mine")
    prepare(con, [Source(path=str(raw))], str(tmp_path / "p"), PrepareSettings(dedup=Dedup()))
    assert con.execute("SELECT * FROM step0").fetchall() == [(42,)]
    assert con.execute("SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'sqltok_prepare'").fetchone() == (0,)
    con.execute("CREATE SCHEMA sqltok_prepare")
    with pytest.raises(SqltokError, match="another prepare run"):
        prepare(con, [Source(path=str(raw))], str(tmp_path / "q"), PrepareSettings())
    assert sorted(os.listdir(tmp_path)) == ["p", "raw.jsonl"]


def test_text_key_and_two_inputs(tmp_path, monkeypatch):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.parquet"
    a.write_text('{"body": "first document", "license": "MIT"}\n{"body": "second one", "license": "MIT"}\n')
    duckdb.connect().execute(f"COPY (SELECT 'third' AS body, 'CC-BY' AS license) TO '{b}'")
    assert main(["prepare", str(a), str(b), "--text-key", "body", "-o", str(tmp_path / "p")]) == 0
    rows = duckdb.connect().execute(f"SELECT text, license FROM '{tmp_path}/p/train.parquet' ORDER BY doc_id").fetchall()
    assert rows == [("first document", "MIT"), ("second one", "MIT"), ("third", "CC-BY")]
    m = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert m["sources"] == [{"license": "MIT", "documents": 2, "bytes": 24}, {"license": "CC-BY", "documents": 1, "bytes": 5}]
    monkeypatch.setattr(prepare_module, "MAX_SOURCES", 1)
    assert main(["prepare", str(a), str(b), "--text-key", "body", "-o", str(tmp_path / "q")]) == 0
    m = json.loads((tmp_path / "q" / "manifest.json").read_text())
    assert m["sources"] == [{"license": "MIT", "documents": 2, "bytes": 24}, {"others": 1, "documents": 1, "bytes": 5}]


def test_lines_apply_to_the_plain_text_sources(tmp_path):
    """--lines with JSONL and plain text sources together: the text file's lines are documents, the
    JSONL file's rows as ever (alone, a JSONL source with --lines is refused)."""
    (tmp_path / "book.txt").write_text("one line\nanother line\n")
    (tmp_path / "docs.jsonl").write_text('{"text": "a row"}\n')
    assert main(["prepare", str(tmp_path / "book.txt"), str(tmp_path / "docs.jsonl"), "--lines",
                 "-o", str(tmp_path / "p")]) == 0
    m = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert m["steps"][0]["documents_out"] == 3
    assert main(["prepare", str(tmp_path / "docs.jsonl"), "--lines", "-o", str(tmp_path / "q")]) == 2


def test_plain_text_lines(tmp_path):
    src = tmp_path / "book.txt"
    src.write_text("one line\n\nanother line\n")
    assert main(["prepare", str(src), "-o", str(tmp_path / "p")]) == 2  # lines or whole file: say which
    assert main(["prepare", str(src), "--lines", "-o", str(tmp_path / "p")]) == 0
    m = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert [s["documents_out"] for s in m["steps"]] == [3, 2]


def test_blob_input_with_invalid_utf8(tmp_path):
    src = tmp_path / "blobs.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM (VALUES (1, 'good'::BLOB), (2, 'bad \\xFF'::BLOB)) "
                             f"t(doc_id, text)) TO '{src}'")
    for action, docs in (("fix", 2), ("drop", 1)):
        out = tmp_path / action
        assert main(["prepare", str(src), "--invalid-utf8", action, "-o", str(out)]) == 0
        m = json.loads((out / "manifest.json").read_text())
        assert m["steps"][1]["invalid_utf8"] == 1 and m["outputs"]["train"]["documents"] == docs


@pytest.mark.parametrize("args, message", [
    (["--balance", "en=0"], "must be positive"),
    (["--balance", "en=1,xx"], "lang=weight"),
    (["--dedup", "fuzzy"], "unknown dedup mode"),
    (["--dedup", "near:2"], "between 0 and 1"),
    (["--mask-pii", "names"], "unknown PII kind"),
    (["--placeholder", "email"], "KIND=TEXT"),
    (["--valid", "1.5"], "between 0 and 1"),
    (["--min-chars", "10", "--max-chars", "5"], "length bounds"),
])
def test_bad_options(raw, tmp_path, capsys, args, message):
    assert main(["prepare", str(raw), "-o", str(tmp_path / "p"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_unknown_option_bad_output_and_missing_languages(raw, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["prepare", str(raw), "-o", str(tmp_path / "p"), "--stem"])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    assert main(["prepare", str(raw), "-o", str(tmp_path / "full")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["prepare", str(raw), "--balance", "en=1,xx=1", "-o", str(tmp_path / "p")]) == 0
    assert re.search(r"no documents in xx; its languages: ar=8.33%, en=8.33%, code=7.58%", capsys.readouterr().err)
    plain = tmp_path / "plain.parquet"
    duckdb.connect().execute(f"COPY (SELECT 'a b c' AS text) TO '{plain}'")
    assert main(["prepare", str(plain), "--uniform", "-o", str(tmp_path / "q")]) == 2
    assert "needs languages" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("")
    assert main(["prepare", str(raw), "-o", str(tmp_path / "a_file")]) == 2
    assert "a_file exists and is not a folder" in capsys.readouterr().err
    empty = tmp_path / "empty.parquet"
    duckdb.connect().execute(f"COPY (SELECT NULL::VARCHAR AS text) TO '{empty}'")
    assert main(["prepare", str(empty), "--detect-language", "--uniform", "-o", str(tmp_path / "r")]) == 2
    assert "no document is left to balance" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["a_file", "empty.parquet", "full", "p", "plain.parquet", "raw.jsonl"]


def test_a_doc_id_shared_by_two_documents_is_an_error(tmp_path, capsys):
    """Dedup drops documents by doc_id: with doc 2 of a.jsonl a copy of doc 1, the distinct doc 2 of
    b.jsonl was dropped with it."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"doc_id": 1, "text": "hello world one"}\n{"doc_id": 2, "text": "hello world one"}\n')
    b.write_text('{"doc_id": 2, "text": "something else here"}\n')
    assert main(["prepare", str(a), str(b), "--dedup", "exact", "-o", str(tmp_path / "p")]) == 2
    assert "doc_id column is not unique (1 of 3 rows" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()
    b.write_text('{"doc_id": 3, "text": "something else here"}\n')
    assert main(["prepare", str(a), str(b), "--dedup", "exact", "-o", str(tmp_path / "p")]) == 0
    rows = duckdb.connect().execute(f"SELECT doc_id, text FROM '{tmp_path}/p/train.parquet' ORDER BY 1").fetchall()
    assert rows == [(1, "hello world one"), (3, "something else here")]


def test_an_output_folder_that_cannot_be_written_leaves_the_connection_usable(raw, tmp_path, monkeypatch):
    con = sqltok.register(duckdb.connect())

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(prepare_module.tempfile, "mkdtemp", refused)
    with pytest.raises(PermissionError):
        prepare(con, [Source(path=str(raw))], str(tmp_path / "p"), PrepareSettings())
    monkeypatch.undo()
    assert con.execute("SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'sqltok_prepare'").fetchone() == (0,)
    prepare(con, [Source(path=str(raw))], str(tmp_path / "p"), PrepareSettings())
    assert (tmp_path / "p" / "train.parquet").exists()


@pytest.mark.parametrize("lines, kind", [(['{"text": 123}', '{"text": 456}'], "BIGINT"),
                                         (['{"text": 123}', '{"text": "abc"}'], "JSON"),
                                         (['{"text": [1, 2]}', '{"text": {"a": "b"}}'], "JSON")])
def test_text_that_is_not_strings_is_a_clear_error(tmp_path, capsys, lines, kind):
    """It was DuckDB's 'strlen(BIGINT)' binder error or 'Malformed JSON at byte 0'."""
    src = tmp_path / "n.jsonl"
    src.write_text("\n".join(lines) + "\n")
    assert main(["prepare", str(src), "-o", str(tmp_path / "p")]) == 2
    assert f"the input's text column is {kind}, not strings" in capsys.readouterr().err
    src.write_text('{"text": null}\n')
    assert main(["prepare", str(src), "-o", str(tmp_path / "p")]) == 0


def test_a_text_column_beside_the_text_key_is_an_error(tmp_path, capsys):
    """With --text-key body and a 'text' column too, the steps cleaned and masked the 'text' column
    and wrote the documents, unmasked, as text_1."""
    src = tmp_path / "t.jsonl"
    src.write_text('{"body": "mail jane.doe@example.com", "text": "meta"}\n')
    assert main(["prepare", str(src), "--text-key", "body", "--mask-pii", "-o", str(tmp_path / "p")]) == 2
    assert "has a column 'text' besides the text key 'body'" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("column", ["n", "r", "want", "k"])
def test_balance_with_input_columns_named_like_its_work_columns(tmp_path, column):
    """The resampling's own n, r, want and k were confused with input columns of those names: en got 7
    copies (want = 7), none (r = 7), one (n) or a binder error (k)."""
    src = tmp_path / "c.jsonl"
    src.write_text("".join(json.dumps({"text": t, "lang": lang, column: v}) + "\n"
                           for t, lang, v in (("doc a", "en", 7), ("doc b", "fr", 1), ("doc c", "fr", 1))))
    assert main(["prepare", str(src), "--uniform", "-o", str(tmp_path / "p")]) == 0
    rows = duckdb.connect().execute(f"SELECT text, {column}, copy FROM '{tmp_path}/p/train.parquet' "
                                    "ORDER BY text, copy").fetchall()
    assert rows == [("doc a", 7, 0), ("doc a", 7, 1), ("doc b", 1, 0), ("doc c", 1, 0)]


def test_mask_pii_with_an_input_column_named_m(tmp_path, capsys):
    src = tmp_path / "c.jsonl"
    src.write_text('{"text": "mail jane.doe@example.com now", "m": "meta", "pii_kinds": "mine"}\n')
    assert main(["prepare", str(src), "--mask-pii", "-o", str(tmp_path / "p")]) == 0
    assert duckdb.connect().execute(f"SELECT text, m, pii_kinds FROM '{tmp_path}/p/train.parquet'").fetchall() == \
        [("mail [EMAIL] now", "meta", "mine")]
    assert json.loads((tmp_path / "p" / "manifest.json").read_text())["pii"]["email"] == 1
    src.write_text('{"text": "x", "lang": "en", "copy": 3}\n')
    assert main(["prepare", str(src), "--uniform", "-o", str(tmp_path / "q")]) == 2
    assert "balancing adds a column 'copy'" in capsys.readouterr().err


def test_a_failed_run_leaves_no_parent_folders(raw, tmp_path, capsys):
    """-o new/deep/out made new/deep before the run, and left it when the run failed."""
    out = tmp_path / "new" / "deep" / "out"
    assert main(["prepare", str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["raw.jsonl"]
    assert main(["prepare", str(raw), "-o", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["manifest.json", "train.parquet"]
    assert sorted(os.listdir(tmp_path)) == ["new", "raw.jsonl"]
