"""`sqltok view`: the page in headless Chromium (its rendered DOM spells the input, token by token, and
a screenshot is taken), and the token spans themselves, for generated text."""
from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import duckdb
import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import decoders

import sqltok
from sqltok.cli import main
from sqltok.judge.viewer import MAX_BYTES, byte_pieces, view_html
from sqltok.named_tokenizers import named_tokenizers

TEXTS = ["Tokenizers are fun 🙂 토크나이저", "two\nlines\tand  spaces, <|endoftext|> naïve “quotes” 𝔘𝔫𝔦 ☃\n\n",
         "日本語のテキストとالعربية"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def viewer(bundled):
    con = duckdb.connect()
    sqltok.register(con)
    con.execute("SELECT sqltok_load('o200k', ?), sqltok_load('r50k', ?), sqltok_load('bert', ?)",
                [str(bundled("o200k_base.tiktoken")), str(bundled("r50k_base.tiktoken")),
                 str(bundled("bert-base-uncased_tokenizer.json"))]).fetchall()
    yield con
    con.close()


class Spans(HTMLParser):
    """Per panel: its tokenizer, the text of each top-level token span and its ids."""

    def __init__(self) -> None:
        super().__init__()
        self.panels: list[dict] = []
        self.depth = 0  # span nesting inside the current token span

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("class") == "panel":
            self.panels.append({"tokenizer": a["data-tokenizer"], "byte_level": a["data-byte-level"] == "true",
                                "tokens": int(a["data-tokens"]), "spans": [], "ids": []})
        elif tag == "span" and self.depth:
            self.depth += 1
        elif tag == "span" and "tok" in a.get("class", "").split():
            self.depth = 1
            self.panels[-1]["spans"].append("")
            self.panels[-1]["ids"] += [int(x) for x in a["data-ids"].split()]

    def handle_endtag(self, tag):
        if tag == "span" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.panels[-1]["spans"][-1] += data


def _check_panels(con, html_text: str, texts: list[str], names: list[str]) -> None:
    parser = Spans()
    parser.feed(html_text)
    assert len(parser.panels) == len(texts) * len(names)
    for k, panel in enumerate(parser.panels):
        text, tok = texts[k // len(names)], named_tokenizers(con).get(names[k % len(names)])
        ids = tok.encode_ordinary(text)
        assert panel["tokenizer"] == tok.name and panel["ids"] == ids and panel["tokens"] == len(ids)
        if panel["byte_level"]:
            assert "".join(panel["spans"]) == text
        else:  # WordPiece: the tokens as the tokenizer writes them
            assert panel["spans"] == [tok.token_strings()[i].as_py() for i in ids]


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium); "
                                             ".ci/run installs it")
def test_page_in_headless_chromium(viewer, tmp_path):
    names = ["o200k", "r50k", "bert"]
    page = tmp_path / "view.html"
    page.write_text(view_html(viewer, names, TEXTS), encoding="utf-8")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,900"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    assert "<html" in dom
    _check_panels(viewer, dom, TEXTS, names)
    shot = tmp_path / "view.png"
    subprocess.run(flags + [f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_page_is_self_contained(viewer):
    page = view_html(viewer, ["o200k"], TEXTS)
    for banned in ("<script", "http://", "https://", "<link", "@import", "url("):
        assert banned not in page
    _check_panels(viewer, page, TEXTS, ["o200k"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30))
def test_byte_pieces_spell_the_text(viewer, text):
    for name in ("o200k", "r50k"):
        tok = named_tokenizers(viewer).get(name)
        ids = tok.encode_ordinary(text)
        pieces = byte_pieces(tok, ids, tok.token_bytes_array())
        assert "".join(p.text for p in pieces) == text
        assert [i for p in pieces for i in p.ids] == ids
        for p in pieces:  # a piece of several tokens only when the first alone is not UTF-8
            assert b"".join(p.chunks).decode() == p.text
            if len(p.ids) > 1:
                with pytest.raises(UnicodeDecodeError):
                    p.chunks[0].decode()


def test_a_split_character_is_one_outlined_span(viewer):
    tok = named_tokenizers(viewer).get("r50k")
    pieces = byte_pieces(tok, tok.encode_ordinary("☃"), tok.token_bytes_array())
    assert len(pieces) == 1 and len(pieces[0].ids) > 1 and pieces[0].text == "☃"
    assert 'class="tok split' in view_html(viewer, ["r50k"], ["☃"])


def test_sentencepiece_byte_fallback_pieces_show_their_character(viewer, bundled):
    """Byte-fallback pieces were shown as "<0xF0>" text: a run of them is one span of the character
    they make, as sentencepiece's and HF's (ByteFallback) decoders give it, the pieces in its tooltip."""
    path = str(bundled("mistral_tokenizer.model.v1"))
    sp = spm.SentencePieceProcessor(model_file=path)
    text = "Hi 🙂 𠀋 é\tok 㐀 \x00"
    page = view_html(viewer, [path], [text])
    parser = Spans()
    parser.feed(page)
    (panel,) = parser.panels
    ids = sp.encode(text)
    assert panel["ids"] == ids and any(sp.is_byte(i) for i in ids)
    shown = "".join(panel["spans"])
    assert shown == decoders.ByteFallback().decode([sp.id_to_piece(i) for i in ids])
    assert shown.replace("▁", " ")[1:] == sp.decode(ids) == text
    assert "𠀋" in panel["spans"] and ">&lt;0x" not in page
    pieces = "&lt;0xF0&gt; &lt;0xA0&gt; &lt;0x80&gt; &lt;0x8B&gt;"
    assert f'title="ids 243 163 131 142: {pieces}: bytes F0 | A0 | 80 | 8B' in page


def test_a_10_mb_document_is_cut_with_a_note(viewer):
    text = ("Tokenizers are fun. 토크나이저 🙂\n" * 300_000)[:10_000_000]
    page = view_html(viewer, ["o200k", "bert"], [text])
    assert page.count("The text is ") == 2 and "the counts are of the whole text" in page
    assert len(page) < 200 * MAX_BYTES
    parser = Spans()
    parser.feed(page)
    o200k = parser.panels[0]
    assert o200k["tokens"] == named_tokenizers(viewer).get("o200k").token_count(text)
    shown = "".join(o200k["spans"])
    assert text.startswith(shown) and MAX_BYTES - 100 < len(shown.encode()) <= MAX_BYTES


def test_cli_view(viewer, bundled, tmp_path, capsys):
    out = tmp_path / "v.html"
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "first doc"}\n{"text": "second doc"}\n{"text": "third"}\n')
    r50k = str(bundled("r50k_base.tiktoken"))
    assert main(["view", r50k, "--text", TEXTS[0], "--on", str(corpus), "--limit", "2", "-o", str(out)]) == 0
    assert "3 text(s) x 1 tokenizer(s)" in capsys.readouterr().out
    parser = Spans()
    parser.feed(out.read_text(encoding="utf-8"))
    assert ["".join(p["spans"]) for p in parser.panels] == [TEXTS[0], "first doc", "second doc"]
    assert main(["view", r50k, "-o", str(out)]) == 2
    assert "nothing to show" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"text": null}\n')
    assert main(["view", r50k, "--on", str(empty), "-o", str(out)]) == 2
    assert "has no documents (no non-NULL text)" in capsys.readouterr().err
    assert main(["view", r50k, "--sql", "SELECT 'x' AS body", "-o", str(out)]) == 2
    assert "has no column 'text' (name the text column with --text-key" in capsys.readouterr().err
    assert main(["view", r50k, "--text", "x", "-o", str(tmp_path / "v.png")]) == 2
    assert "must end in .html" in capsys.readouterr().err


def test_lone_surrogates_and_a_file_not_utf8(viewer, bundled, tmp_path, capsys):
    page = view_html(viewer, ["r50k", "bert"], ["a\udc80b \ud83d\ude42"])
    page.encode("utf-8")
    parser = Spans()
    parser.feed(page)
    assert "".join(parser.panels[0]["spans"]) == "a\ufffdb 🙂"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"a\xffb")
    assert main(["view", str(bundled("r50k_base.tiktoken")), "--file", str(bad), "-o", str(tmp_path / "v.html")]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err


def test_cli_view_limit_and_max_bytes_must_be_positive(bundled, tmp_path, capsys):
    """--limit 0 said the corpus had no documents, --limit -1 was DuckDB's binder error, --max-bytes -5
    a page 'showing its first 0 tokens (up to -5 bytes)'."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "first doc"}\n')
    r50k, out = str(bundled("r50k_base.tiktoken")), str(tmp_path / "v.html")
    for args, flag in ((["--on", str(corpus), "--limit", "0"], "--limit must be a positive number, not 0"),
                       (["--on", str(corpus), "--limit", "-1"], "--limit must be a positive number, not -1"),
                       (["--text", "hello", "--max-bytes", "-5"], "--max-bytes must be a positive number, not -5")):
        assert main(["view", r50k, *args, "-o", out]) == 2
        assert flag in capsys.readouterr().err
