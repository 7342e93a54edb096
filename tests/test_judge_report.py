"""`sqltok report`: the folder holds an index.html that needs no network, every plot as PNG and SVG
and every table as CSV and Parquet, with the same numbers as the SQL and the tokenizers give."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

import sqltok
from sqltok.cli import main
from sqltok.judge.metrics import evaluate
from sqltok.judge.report import write_report
from sqltok.named_tokenizers import named_tokenizers

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
EN_VALID = Path(__file__).parent / "data" / "golden" / "en_valid.jsonl.gz"
PLOTS = ("bytes_per_token", "tokens_per_document", "token_lengths", "zipf", "merge_curves")
TABLES = ("metrics", "tokens_per_document", "token_frequencies", "token_lengths", "merge_curves")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "w.duckdb"
    with duckdb.connect(str(path)) as con:
        sqltok.register(con)
        sqltok.train_superword(con, sqltok.Source(path=str(EN_VALID)), 700, "bl", simple=True)
    return path


def test_report_folder(db, bundled, tmp_path):
    out = tmp_path / "report"
    r50k = str(bundled("r50k_base.tiktoken"))
    with duckdb.connect(str(db)) as con:
        index = write_report(con, ["bl", r50k], sqltok.Source(path=str(SAMPLE)), out, by="lang", reference="en")
        page = index.read_text(encoding="utf-8")
        for banned in ("<script", "http://", "https://", "<link", "url("):
            assert banned not in page
        for src in re.findall(r'(?:src|href)="([^"]+)"', page):
            assert (out / src).is_file(), src
        for stem in PLOTS:
            assert f'src="{stem}.png"' in page and (out / f"{stem}.svg").stat().st_size > 1000
            assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        for name in TABLES:
            assert (out / f"{name}.csv").stat().st_size > 0
        want = evaluate(con, ["bl", r50k], sqltok.Source(path=str(SAMPLE)), by="lang", reference="en")
        written = pq.read_table(out / "metrics.parquet").to_pylist()
        assert len(written) == want.num_rows
        for got, row in zip(written, want.to_pylist()):  # sums of floats may differ in the last bit
            assert got == {k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in row.items()}
        assert "<td>(all)</td>" in page and "relative to group en" in page

        texts = [(t, lang) for t, lang in con.execute(f"SELECT text, lang FROM read_json('{SAMPLE}')").fetchall()]
        per_doc = pq.read_table(out / "tokens_per_document.parquet").to_pylist()
        lengths = pq.read_table(out / "token_lengths.parquet").to_pylist()
        for name in ("bl", "r50k_base"):
            tok = named_tokenizers(con).get(name)
            ids = [tok.encode_ordinary(t) for t, _ in texts]
            assert [(r["group"], r["tokens"]) for r in per_doc if r["tokenizer"] == name] == \
                [(lang, len(i)) for (_, lang), i in zip(texts, ids)]
            by_length = Counter(len(tok.decode_single_token_bytes(x)) for seq in ids for x in seq)
            total = sum(by_length.values())
            assert {r["token_bytes"]: r["tokens"] for r in lengths if r["tokenizer"] == name} == by_length
            assert all(r["share"] == pytest.approx(by_length[r["token_bytes"]] / total, rel=1e-12)
                       for r in lengths if r["tokenizer"] == name)
        curves = pq.read_table(out / "merge_curves.parquet").to_pylist()
        assert [(r["kind"], r["idx"], r["count"]) for r in curves] == \
            con.execute("SELECT kind, idx, count FROM sqltok_merge_curve('bl')").fetchall()
        assert {r["model"] for r in curves} == {"bl"}


def test_cli_report_without_stored_models(bundled, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["report", str(bundled("r50k_base.tiktoken")), "--on", str(SAMPLE), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "No merge curves" in page and not (out / "merge_curves.png").exists()
    assert "dominant Unicode script" in page and "Latin" in page
    assert main(["report", "nope", "--on", str(SAMPLE), "-o", str(out)]) == 2
    assert "no tokenizer named 'nope'" in capsys.readouterr().err


def test_a_failed_report_makes_no_folder(bundled, tmp_path, capsys):
    out = tmp_path / "new" / "r"
    assert main(["report", str(bundled("r50k_base.tiktoken")), "--on", str(SAMPLE), "--by", "nope", "-o", str(out)]) == 2
    assert "no column 'nope'" in capsys.readouterr().err and not (tmp_path / "new").exists()


def test_group_names_with_dollars_and_markup(bundled, tmp_path, capsys):
    """Group names are text in the plots (not matplotlib mathtext, which failed on `$\\frac{a$`) and
    escaped in the page."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "hello there", "g": "$\\\\frac{a$"}\n{"text": "x", "g": "<script>x</script>"}\n')
    out = tmp_path / "r"
    assert main(["report", str(bundled("r50k_base.tiktoken")), "--on", str(corpus), "--by", "g", "-o", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "$\\frac{a$" in page


@pytest.mark.parametrize("column", ["d", "doc"])
def test_group_by_a_column_named_like_the_row_alias(bundled, tmp_path, column):
    """--by d was a binder error (struct_extract of the column d, not of the row d); --by doc grouped
    tokens_per_document by the report's own row number."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(f'{{"text": "hello world", "{column}": "A"}}\n{{"text": "bonjour", "{column}": "B"}}\n')
    out = tmp_path / "r"
    assert main(["report", str(bundled("r50k_base.tiktoken")), "--on", str(corpus), "--by", column, "-o", str(out)]) == 0
    assert [(r["group"], r["doc"]) for r in pq.read_table(out / "tokens_per_document.parquet").to_pylist()] == \
        [("A", 1), ("B", 2)]
    assert {r["group"] for r in pq.read_table(out / "metrics.parquet").to_pylist()} == {None, "A", "B"}


def test_blob_text_is_judged_as_varchar_and_invalid_utf8_is_a_clear_error(bundled, tmp_path, capsys):
    """Parquet binary text was refused ("decode it first") where training decodes it: valid UTF-8
    BLOBs are judged as the same text in VARCHAR; invalid UTF-8 is training's error, naming the document."""
    con, r50k = duckdb.connect(), str(bundled("r50k_base.tiktoken"))
    rows = "(VALUES ('good text', 'a'), ('café 🙂 日本', 'b')) t(text, g)"
    for name, text in (("blob", "encode(text)"), ("varchar", "text")):
        con.execute(f"COPY (SELECT {text} AS text, g FROM {rows}) TO '{tmp_path / name}.parquet'")
    con.execute(f"COPY (SELECT * FROM (VALUES ('ok'::BLOB, 'a'), ('bad \\xFF'::BLOB, 'b')) t(text, g)) "
                f"TO '{tmp_path / 'bad.parquet'}'")

    def judged(src: str) -> list[tuple]:
        got = []
        for args in (["evaluate", r50k, "--on", src, "--json"], ["evaluate", r50k, "--on", src, "--by", "g"],
                     ["report", r50k, "--on", src, "-o", str(tmp_path / "r")],
                     ["view", r50k, "--on", src, "-o", str(tmp_path / "v.html")]):
            code = main(args)
            out, err = capsys.readouterr()
            page = (tmp_path / "v.html").read_text() if args[0] == "view" and code == 0 else ""
            got.append((code, out, err, page))
        return got

    assert judged(str(tmp_path / "blob.parquet")) == judged(str(tmp_path / "varchar.parquet"))
    assert "本" in (tmp_path / "v.html").read_text()
    for code, _, err, _ in judged(str(tmp_path / "bad.parquet")):
        assert code == 2 and "document 2 of " in err and "is not valid UTF-8" in err
