"""Which kind of tokenizer file a path holds, told by its content rather than its name (names mislead:
GPT-2's merges.txt and BERT's vocab.txt share a suffix, mistral-common ships SentencePiece models as
`*.model.v3`)."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.formats.files import exists, read_head
from sqltok.formats.json_file import load_json

#: Every kind sniff() tells apart (and the kinds only a database keeps), and how messages name it.
KINDS = {
    "tiktoken": "a tiktoken BPE file",
    "reference": "a reference BoundlessBPE .model file",
    "hf-bpe": "an HF tokenizer.json with a BPE model",
    "hf-wordpiece": "an HF tokenizer.json with a WordPiece model",
    "hf-unigram": "an HF tokenizer.json with a Unigram model (SentencePiece-style)",
    "hf-sp-bpe": "an HF tokenizer.json with a SentencePiece-style BPE model (byte fallback or Metaspace)",
    "gpt2-vocab": "a GPT-2 vocab.json",
    "gpt2-merges": "a GPT-2 merges.txt",
    "vocab-txt": "a WordPiece vocab.txt",
    "sentencepiece": "a SentencePiece model (protobuf)",
    "tekken": "a Mistral Tekken tokenizer (tekken_*.json)",
    "tiktoken-encoding": "a tiktoken encoding (ranks, pattern, special tokens) kept in a database",
}

SNIFF_BYTES = 1 << 16
_TIKTOKEN_LINE = re.compile(rb"[A-Za-z0-9+/]+=*[ \t]+[0-9]+\r?")


@dataclass(frozen=True)
class TokenizerFile:
    """A tokenizer file and its kind; `document` is the parsed JSON of JSON kinds, `companion` the
    other file of a GPT-2 pair (merges.txt beside a vocab.json, and the reverse), `content` the file's
    bytes when they come from elsewhere than `path` (a model kept in a database; `path` labels it)."""

    path: Path
    kind: str
    document: object = None
    companion: Path | None = None
    content: bytes | None = None

    def describe(self) -> str:
        return KINDS.get(self.kind, self.kind)


def sniff(path: str | os.PathLike) -> TokenizerFile:
    """The kind of tokenizer file at `path`; a clear error when it is none sqltok reads."""
    p = Path(path)
    head = read_head(p, SNIFF_BYTES)
    if not head.strip():
        raise ModelFormatError(f"{p}: the file is empty")
    if head.startswith(b"BoundlessBPE "):
        return TokenizerFile(p, "reference")
    if _is_model_proto(head):
        return TokenizerFile(p, "sentencepiece")
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return _json_kind(p)
    if _is_binary(head):
        raise ModelFormatError(f"{p}: binary data that is no tokenizer file sqltok knows")
    lines = [line for line in head.split(b"\n")[:-1] if line.strip()][:64] or [head]
    if _TIKTOKEN_LINE.fullmatch(lines[0]):
        return TokenizerFile(p, "tiktoken")
    if lines[0].startswith(b"#version") or all(len(line.rstrip(b"\r").split(b" ")) == 2 for line in lines):
        return TokenizerFile(p, "gpt2-merges", companion=_companion(p, "vocab.json", "merges.txt"))
    return TokenizerFile(p, "vocab-txt")


def _json_kind(p: Path) -> TokenizerFile:
    doc = load_json(p)
    if isinstance(doc, dict) and isinstance(doc.get("config"), dict) and isinstance(doc.get("vocab"), list):
        return TokenizerFile(p, "tekken", doc)  # mistral-common's: {config: {pattern, ...}, vocab: [...]}
    if isinstance(doc, dict) and isinstance(doc.get("model"), dict):
        kind = f"hf-{str(doc['model'].get('type')).lower()}"
        if kind == "hf-bpe" and _sentencepiece_style(doc):
            kind = "hf-sp-bpe"
        if kind not in KINDS:
            raise UnsupportedTokenizerError(
                f"{p}: model type {doc['model'].get('type')} is not one sqltok reads (BPE, WordPiece, Unigram)")
        return TokenizerFile(p, kind, doc)
    if isinstance(doc, dict) and doc and all(isinstance(v, int) for v in doc.values()):
        return TokenizerFile(p, "gpt2-vocab", doc, _companion(p, "merges.txt", "vocab.json"))
    raise ModelFormatError(f"{p}: not a tokenizer.json: expected a JSON object with a 'model' object")


def _sentencepiece_style(doc: dict) -> bool:
    """A BPE tokenizer.json of the SentencePiece family: byte fallback, or "▁" for spaces (a
    Metaspace step, or a Prepend/Replace writing "▁") anywhere in its pipeline."""
    if doc["model"].get("byte_fallback"):
        return True
    pipeline = json.dumps([doc.get(k) for k in ("normalizer", "pre_tokenizer", "decoder")], ensure_ascii=False)
    return '"Metaspace"' in pipeline or "\u2581" in pipeline


def _companion(p: Path, wanted: str, own: str) -> Path:
    """The other file of a GPT-2 pair: `wanted` beside `p` (or `p`'s name with `own` replaced)."""
    for candidate in (p.with_name(p.name.replace(own, wanted)), p.with_name(wanted)):
        if candidate != p and exists(candidate):
            return candidate
    raise ModelFormatError(f"{p} looks like GPT-2's {own}; its {wanted} must be beside it (as HF's "
                           "ByteLevelBPETokenizer.from_file takes both)")


def _is_model_proto(head: bytes) -> bool:
    """A SentencePiece ModelProto starts with field 1 (a piece, length-delimited) whose own first
    field is 1 (its text): 0x0A, a length, 0x0A. Binary data starting with 0x0A counts too."""
    if head[:1] != b"\x0a":
        return False
    at = 1
    while at < min(len(head), 11) and head[at] & 0x80:
        at += 1
    return head[at + 1:at + 2] == b"\x0a" or _is_binary(head)


def _is_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(head) - 3  # not just a character cut by the end of the sample
    return False
