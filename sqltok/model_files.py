"""Models between the database and files: the reference's `.model` format, HF `tokenizer.json`,
BERT's `vocab.txt` and tiktoken's `.tiktoken`."""
from __future__ import annotations

import json
from pathlib import Path

from sqltok.errors import SqltokError
from sqltok.bpe.hf_from_ranks import hf_json_from_ranks
from sqltok.bpe.hf_write import write_hf
from sqltok.bpe.tiktoken_file import read_encoding_document
from sqltok.bpe.reference_file import read_reference, write_reference
from sqltok.store import (ModelFile, check_new_name, delete_rows, ensure_schema, load_model, load_model_file,
                          require_model, save_model, transaction)
from sqltok.unigram.export import export_unigram
from sqltok.unigram.train import METHOD as UNIGRAM

FORMATS = ("reference", "hf", "vocab", "sentencepiece", "tiktoken")


def export_model(con, name: str, path: str | Path, format: str = "reference", lossy: bool = False) -> None:
    """Write model `name` to `path`: `reference` (`.model` v2) or `hf` (`tokenizer.json`); a WordPiece
    model as `hf` or `vocab` (`vocab.txt`), a Unigram model as `sentencepiece` (its `.model`) or `hf`,
    a tiktoken encoding (an extended `.tiktoken`) as `tiktoken` (its ranks) or `hf`.

    HF cannot reproduce script-aware splitting or supermerges: such models are refused unless
    `lossy=True`, which writes the closest HF equivalent and warns what differs.
    """
    if format not in FORMATS:
        raise SqltokError(f"unknown format {format!r}; expected one of {FORMATS}")
    require_model(con, name)
    kept = load_model_file(con, name)
    if kept is not None and kept.method == UNIGRAM:
        export_unigram(con, name, kept, path, format)
        return
    if kept is not None:
        Path(path).write_bytes(_kept_as(kept, name, format))
        return
    if format in ("vocab", "sentencepiece", "tiktoken"):
        raise SqltokError(f"model {name!r} is a byte-level BPE model; --format {format} writes "
                          + {"vocab": "WordPiece", "sentencepiece": "Unigram",
                             "tiktoken": "tiktoken-style (ranked)"}[format] + " models")
    model = load_model(con, name)
    if format == "reference":
        write_reference(model, path)
    else:
        write_hf(model, path, lossy=lossy)


def import_model(con, path: str | Path, name: str, replace: bool = False) -> None:
    """Read a reference `.model` file into the database as model `name`."""
    model = read_reference(path)
    ensure_schema(con)
    check_new_name(con, name, replace)
    with transaction(con):
        delete_rows(con, name)
        save_model(con, name, model, {"source": str(path)})


def _kept_as(kept: ModelFile, name: str, format: str) -> bytes:
    """A model kept as a tokenizer.json, as the bytes of `format`: the file itself (`hf`), or for a
    WordPiece one `vocab`: its tokens by id, one a line, as HF's WordPiece model saves vocab.txt; a
    tiktoken encoding as its `.tiktoken` ranks or their tokenizer.json."""
    if kept.kind == "tiktoken-encoding" and format in ("tiktoken", "hf"):
        if format == "tiktoken":
            return json.loads(kept.content)["mergeable_ranks"].encode()
        return hf_json_from_ranks(read_encoding_document(kept.content, name))
    if kept.kind.startswith("hf-") and format == "hf":
        return kept.content
    if kept.kind == "hf-wordpiece" and format == "vocab":
        vocab = json.loads(kept.content)["model"]["vocab"]
        return "".join(t + "\n" for t in sorted(vocab, key=vocab.get)).encode()
    raise SqltokError(f"model {name!r} is a {kept.method} model ({kept.kind}); it exports as "
                      + ("--format hf or --format vocab" if kept.kind == "hf-wordpiece" else
                         "--format tiktoken or --format hf" if kept.kind == "tiktoken-encoding" else
                         "--format hf" if kept.kind.startswith("hf-") else "the file it is kept as"))
