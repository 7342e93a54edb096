"""Writing a stored Unigram model to a file: `sentencepiece` (the `.model` bytes as trained) or `hf`
(a tokenizer.json built from its pieces and settings)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from sqltok.errors import SqltokError
from sqltok.store import ModelFile
from sqltok.unigram.hf_json import tokenizer_json
from sqltok.unigram.model_proto import read_pieces
from sqltok.unigram.sentences import charsmap
from sqltok.unigram.spec import UnigramSpec

FORMATS = ("sentencepiece", "hf")


def export_unigram(con, name: str, kept: ModelFile, path: str | os.PathLike, format: str) -> None:
    """Write the kept Unigram model `name` to `path` in `format`."""
    if format not in FORMATS:
        raise SqltokError(f"a unigram model exports as {' or '.join(FORMATS)}, not {format!r}")
    if format == "sentencepiece":
        Path(path).write_bytes(kept.content)
        return
    settings = con.execute("SELECT settings FROM sqltok_store.models WHERE model = ?", [name]).fetchall()[0][0]
    spec = UnigramSpec(**json.loads(settings))
    text = tokenizer_json(read_pieces(kept.content), spec, charsmap(spec.normalization_rule_name))
    Path(path).write_text(text, encoding="utf-8", newline="\n")
