"""`sqltok view`: one self-contained HTML page (no scripts, no network) showing texts as each
tokenizer splits them.

Every token is a coloured span whose tooltip gives its id and bytes; whitespace stays in the text and
is made visible by CSS marks that are not part of it, so the spans of a byte-level tokenizer
concatenate to the input. Tokens that are not UTF-8 on their own (byte pieces of one character)
are joined with their neighbours into one span, outlined, that lists each token's bytes; so are
SentencePiece's byte-fallback pieces ("<0xF0>" ...), shown as the bytes they stand for, the character
sentencepiece's and HF's decoders make of them (the pieces as spelled in the tooltip). WordPiece
tokens are shown as the tokenizer writes them (`##` pieces of normalized text): they do not spell the
input. Texts longer than `max_bytes` are shown cut, with a note; counts are always of the whole text.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.tokenizer import Tokenizer, text_array
from sqltok.judge.metrics import tokenizer_names
from sqltok.named_tokenizers import named_tokenizers
from sqltok.sentencepiece.hf_tokenizer import HfSentencePieceTokenizer
from sqltok.sentencepiece.model_proto import PieceType
from sqltok.sentencepiece.tokenizer import SentencePieceTokenizer
from sqltok.wordpiece.tokenizer import WordPieceTokenizer

MAX_BYTES = 20_000  # bytes of each text shown: a page of some thousand spans per panel stays quick
COLOURS = 6
STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.3em; } h2 { font-size: 1.05em; margin: 1.4em 0 .4em; color: #444; }
.legend { color: #555; font-size: .9em; }
.panel { border: 1px solid #ddd; border-radius: 6px; margin: .5em 0; padding: .5em .7em; }
.head { font-size: .9em; color: #555; margin-bottom: .3em; } .head b { color: #111; }
.tokens { font: 14px/1.9 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-all; }
.tok { border-radius: 3px; padding: 1px 0; }
.c0 { background: #cfe8ff; } .c1 { background: #ffe0b3; } .c2 { background: #d4f5d0; }
.c3 { background: #f6d0f0; } .c4 { background: #fff3a8; } .c5 { background: #d9d4ff; }
.tok:hover { outline: 2px solid #333; }
.wordpiece .tok { margin-right: 3px; }
.split { outline: 1.5px dashed #c0392b; background-image: repeating-linear-gradient(45deg, transparent 0 4px, rgba(192,57,43,.15) 4px 6px); }
.split::after { content: attr(data-n) "\\00d7"; font-size: .65em; vertical-align: super; color: #c0392b; }
.special { background: #444; color: #fff; }
.sp, .tab { position: relative; }
.sp::after { content: "\\00b7"; position: absolute; left: 0; right: 0; text-align: center; color: #888; }
.tab::after { content: "\\2192"; position: absolute; left: 0; color: #888; }
.nl::before { content: "\\21b5"; color: #888; }
.note { background: #fff4d6; border-left: 4px solid #e0a800; padding: .3em .6em; font-size: .9em; }
"""


@dataclass
class Piece:
    """What one span shows: its text, the ids and bytes of the tokens in it, and its kind; `spelled`:
    the tokens as the tokenizer spells them, when that is not their bytes (byte-fallback pieces)."""
    text: str
    ids: list[int]
    chunks: list[bytes]
    special: bool = False
    spelled: list[str] | None = None


def byte_pieces(tok: Tokenizer, ids: Sequence[int], token_bytes: pa.Array) -> list[Piece]:
    """Spans of a byte-level tokenizer: one per token, or one for a run of tokens that are only valid
    UTF-8 together."""
    specials = set(tok.special_tokens.values())
    out: list[Piece] = []
    pending_ids: list[int] = []
    pending: list[bytes] = []
    for i in ids:
        chunk = token_bytes[i].as_py()
        if i in specials and not pending:
            out.append(Piece(chunk.decode("utf-8", "replace"), [i], [chunk], special=True))
            continue
        pending_ids.append(i)
        pending.append(chunk)
        try:
            text = b"".join(pending).decode("utf-8")
        except UnicodeDecodeError as e:
            if e.reason == "unexpected end of data":
                continue
            text = b"".join(pending).decode("utf-8", "replace")
        out.append(Piece(text, pending_ids, pending))
        pending_ids, pending = [], []
    if pending:  # the text was cut inside a character
        out.append(Piece(b"".join(pending).decode("utf-8", "replace"), pending_ids, pending))
    return out


def shown_bytes(tok: Tokenizer) -> pa.Array:
    """Every token's bytes as the page shows them (`token_bytes_array()`), but a SentencePiece
    byte-fallback piece ("<0xF0>") as the byte it stands for, as sentencepiece's and HF's decoders
    (ByteFallback) read it."""
    spelled = tok.token_bytes_array()
    if not isinstance(tok, SentencePieceTokenizer) or \
            (isinstance(tok, HfSentencePieceTokenizer) and not tok.hf.decoder.byte_fallback):
        return spelled
    is_byte = np.asarray(tok.model.types) == PieceType.BYTE
    values = [bytes.fromhex(tok.model.pieces[i][3:5]) for i in np.flatnonzero(is_byte)]
    return pc.replace_with_mask(spelled, pa.array(is_byte), pa.array(values, pa.large_binary()))


def wordpiece_pieces(tok: WordPieceTokenizer, ids: Sequence[int]) -> list[Piece]:
    strings = tok.token_strings()
    specials = set(tok.special_tokens.values())
    return [Piece(strings[i].as_py(), [i], [strings[i].as_py().encode()], special=i in specials) for i in ids]


def _visible(text: str) -> str:
    """`text` escaped for HTML, each space, tab and newline in a span that CSS marks."""
    out = []
    for ch in text:
        if ch == " ":
            out.append('<span class="sp"> </span>')
        elif ch == "\t":
            out.append('<span class="tab">\t</span>')
        elif ch == "\n":
            out.append('<span class="nl">\n</span>')
        else:
            out.append(html.escape(ch))
    return "".join(out)


def _span(piece: Piece, n: int) -> str:
    what = "bytes " + " | ".join(c.hex(" ").upper() for c in piece.chunks)
    if piece.spelled:
        what = f"{' '.join(piece.spelled)}: {what}"
    ids = " ".join(map(str, piece.ids))
    kind = "special" if piece.special else f"c{n % COLOURS}"
    if len(piece.ids) > 1:
        title = f"ids {ids}: {what} (not UTF-8 one by one; together: {piece.text!r})"
        return (f'<span class="tok split {kind}" data-ids="{ids}" data-n="{len(piece.ids)}" '
                f'title="{html.escape(title)}">{_visible(piece.text)}</span>')
    title = f"id {ids}: {what} {piece.text!r}"
    return f'<span class="tok {kind}" data-ids="{ids}" title="{html.escape(title)}">{_visible(piece.text)}</span>'


def _shown(ids: pa.Array, token_bytes: pa.Array, max_bytes: int) -> int:
    """How many of the leading tokens fit in `max_bytes` bytes."""
    lengths = pc.fill_null(pc.binary_length(token_bytes), 0).to_numpy(zero_copy_only=False)
    ends = np.cumsum(lengths[ids.to_numpy(zero_copy_only=False)])
    return int(np.searchsorted(ends, max_bytes, side="right"))


def _panel(tok: Tokenizer, token_bytes: pa.Array, text: str, max_bytes: int) -> str:
    """`text` as `tok` splits it, each token shown as its `token_bytes` (see `shown_bytes`)."""
    ids = tok.encode_arrow(pa.array([text], pa.large_string()))[0].values
    total = len(ids)
    nbytes = len(text.encode())
    byte_level = not isinstance(tok, WordPieceTokenizer)
    shown = _shown(ids, token_bytes, max_bytes) if nbytes > max_bytes else total
    head = ids[:shown].to_pylist()
    pieces = byte_pieces(tok, head, token_bytes) if byte_level else wordpiece_pieces(tok, head)
    spelled = tok.token_bytes_array()
    if token_bytes is not spelled:  # the tooltip gives the tokens shown as other bytes as spelled too
        for p in pieces:
            if [spelled[i].as_py() for i in p.ids] != p.chunks:
                p.spelled = [spelled[i].as_py().decode() for i in p.ids]
    note = ""
    if shown < total:
        note = (f'<p class="note">The text is {nbytes:,} bytes: showing its first {shown:,} of {total:,} tokens '
                f"(up to {max_bytes:,} bytes); the counts are of the whole text.</p>")
    per = f"{nbytes / total:.2f} bytes/token" if total else "no tokens"
    what = "" if byte_level else " · WordPiece: tokens as written, of the normalized text"
    body = "".join(_span(p, n) for n, p in enumerate(pieces))
    return (f'<div class="panel" data-tokenizer="{html.escape(tok.name)}" data-byte-level="{str(byte_level).lower()}" '
            f'data-tokens="{total}"><div class="head"><b>{html.escape(tok.name)}</b> · {total:,} tokens · {per}'
            f'{what}</div>{note}<div class="tokens{"" if byte_level else " wordpiece"}">{body}</div></div>')


def view_html(con: duckdb.DuckDBPyConnection, tokenizers: Sequence[str], texts: Sequence[str],
              max_bytes: int = MAX_BYTES) -> str:
    """The page: every text once per tokenizer (stored model names or tokenizer files). Surrogates,
    which the UTF-8 page cannot hold, are shown as tiktoken reads them (a lone one U+FFFD)."""
    texts = text_array(list(texts), fix_surrogates=True).to_pylist()
    reg = named_tokenizers(con)
    toks = [reg.get(n) for n in tokenizer_names(con, tokenizers)]
    shown = [(tok, shown_bytes(tok)) for tok in toks]
    sections = []
    for k, text in enumerate(texts):
        panels = "".join(_panel(tok, token_bytes, text, max_bytes) for tok, token_bytes in shown)
        sections.append(f'<section class="doc" data-doc="{k}"><h2>Text {k + 1} · {len(text.encode()):,} bytes, '
                        f"{len(text):,} characters</h2>{panels}</section>")
    legend = ("Each coloured span is one token; hover for its id and bytes. · marks a space, → a tab, "
              "↵ a newline. A dashed span holds tokens that are only valid UTF-8 together (its ×n says how many).")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sqltok view: '
            f'{html.escape(", ".join(t.name for t in toks))}</title><style>{STYLE}</style></head><body>'
            f'<h1>sqltok view · {html.escape(", ".join(t.name for t in toks))}</h1>'
            f'<p class="legend">{legend}</p>{"".join(sections)}</body></html>')
