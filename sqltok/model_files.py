"""Models between the database and files: the reference's `.model` format and HF `tokenizer.json`."""
from __future__ import annotations

from pathlib import Path

from sqltok.errors import SqltokError
from sqltok.bpe.hf_write import write_hf
from sqltok.bpe.reference_file import read_reference, write_reference
from sqltok.store import check_new_name, delete_rows, ensure_schema, load_model, load_model_file, save_model
from sqltok.store import transaction
from sqltok.unigram.export import export_unigram
from sqltok.unigram.train import METHOD as UNIGRAM

FORMATS = ("reference", "hf", "sentencepiece")


def export_model(con, name: str, path: str | Path, format: str = "reference", lossy: bool = False) -> None:
    """Write model `name` to `path`: `reference` (`.model` v2) or `hf` (`tokenizer.json`); a Unigram
    model as `sentencepiece` (its `.model`) or `hf`.

    HF cannot reproduce script-aware splitting or supermerges: such models are refused unless
    `lossy=True`, which writes the closest HF equivalent and warns what differs.
    """
    if format not in FORMATS:
        raise SqltokError(f"unknown format {format!r}; expected one of {FORMATS}")
    kept = load_model_file(con, name)
    if kept is not None and kept.method == UNIGRAM:
        export_unigram(con, name, kept, path, format)
        return
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
