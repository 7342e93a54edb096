"""Extending a byte-level BPE vocabulary: N more merges learned on a new corpus on top of a model,
every existing token keeping its id and bytes (seed 003 section 2.1.4, "incremental training";
tokenizers #879, #839).

Stages: prepare the new corpus, count its pretokens (`GROUP BY`, with the base's pretokenizer),
encode each unique pretoken with the base model, merge (`_merge.pyx`: sqltok's BPE merge loop over
those sequences), store (the base's tables plus the new tokens and merges, one transaction), then the
regression report (`regression.py`). The new tokens follow the base's in merge order. The special
tokens move to after the new tokens (`specials="move"`, their order kept), or keep their ids
(`specials="keep"`: the new tokens then start after them; for a sqltok model, whose ids have no gaps,
only when no new token would need one of their ids).

Bases: a sqltok model (stored, or a reference `.model` file), extended into a sqltok model; an HF
byte-level BPE tokenizer.json (`hf_base.py`), extended into a tokenizer.json kept in the database;
a `.tiktoken` file (`tiktoken_base.py`), extended into ranks: tiktoken merges by the rank of a
concatenation, so the extension is kept and encoded as a tiktoken encoding, not as a merge list.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace as with_fields

import duckdb

from sqltok.bpe.hf_read import spec_from_hf_json
from sqltok.bpe.model import Merge, Model
from sqltok.bpe.reference_file import read_reference
from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.bpe.tiktoken_file import encoding_document, read_encoding_document, read_tiktoken
from sqltok.bpe.tokenizer import BPETokenizer
from sqltok.corpus.sources import Source
from sqltok.duck import column
from sqltok.errors import SqltokError
from sqltok.extend._merge import extend_merges
from sqltok.extend.hf_base import count_pattern, document_bytes, extended_document
from sqltok.extend.tiktoken_base import extended_ranks
from sqltok.extend.regression import Regression, regression
from sqltok.formats.kind import sniff
from sqltok.interrupts import interruptible
from sqltok.progress import Progress
from sqltok.register import register
from sqltok.store import (ModelFile, check_new_name, delete_rows, ensure_schema, load_model, load_model_file,
                          model_exists, save_model, save_model_file, save_pretoken_counts, transaction)
from sqltok.threads import default_threads
from sqltok.training.counting import count_corpus
from sqltok.training.stopwatch import Stopwatch
from sqltok.training.work_tables import WorkTables

SPECIALS = ("move", "keep")


@dataclass
class ExtendReport:
    """What an extension did: the merges and tokens it added, where the special tokens went, the
    regression report, and the seconds per stage."""

    model: str
    base: str
    merges: int
    new_tokens: int
    n_vocab: int                                  # one more than the largest id, special tokens included
    special_tokens: dict[str, tuple[int, int]]   # text -> (id in the base, id now)
    regression: Regression
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Base:
    """The model an extension starts from: a sqltok model (`model`), an HF tokenizer.json
    (`document`) or tiktoken ranks (`ranks`), its token bytes by id (None: no mergeable token), its
    tokenizer, and the pattern its pretokens are counted with (see `count_pattern`)."""

    name: str
    tokens: list[bytes | None]
    script_aware: bool
    special_tokens: dict[str, int]
    tokenizer: BPETokenizer
    model: Model | None = None
    document: dict | None = None
    ranks: EncoderSpec | None = None
    pattern: str | None = None


def load_base(con: duckdb.DuckDBPyConnection, base: str) -> Base:
    """The base named `base`: a model stored in the database (an extended tokenizer.json or tiktoken
    encoding too), a reference `.model` file, an HF byte-level BPE tokenizer.json or a standard
    `.tiktoken` file (its pattern known; see `count_pattern`)."""
    if model_exists(con, base):
        kept = load_model_file(con, base)   # an extended tokenizer.json or .tiktoken extends further
        if kept is not None and kept.kind == "hf-bpe":
            return _hf_base(base, json.loads(kept.content))
        if kept is not None and kept.kind == "tiktoken-encoding":
            return _tiktoken_base(base, read_encoding_document(kept.content, base))
        model = load_model(con, base)
    elif os.path.exists(base):
        file = sniff(base)
        if file.kind == "hf-bpe":
            return _hf_base(base, file.document)
        if file.kind == "tiktoken":
            return _tiktoken_base(base, read_tiktoken(base))
        if file.kind != "reference":
            raise SqltokError(f"{base} is {file.describe()}: sqltok extends byte-level BPE models it trained "
                              "(by name, or as a reference .model file), HF tokenizer.json and .tiktoken files")
        model = read_reference(base)
    else:
        raise SqltokError(f"no model named {base!r} in this database and no such file")
    if model.method != "word" or model.supermerges:
        raise SqltokError(f"{base!r} is a {model.method} model with supermerges; only byte-level BPE models "
                          "(method word) can be extended")
    return Base(base, model.tokens, model.script_aware, model.special_tokens, BPETokenizer.from_model(model, base),
                model=model)


def _hf_base(base: str, document: dict) -> Base:
    """The base of an HF byte-level BPE tokenizer.json `document`, its added tokens with the ids HF
    gives them (which need not be the file's, see `read_added_tokens`)."""
    spec = spec_from_hf_json(document, base)
    pattern = count_pattern(spec, base)
    ids = {**spec.special_tokens, **spec.added_tokens}
    document = dict(document, added_tokens=[dict(t, id=ids[t["content"]]) for t in document.get("added_tokens") or []])
    added = set(ids.values())   # never merged into
    tokens = [None if i in added else t for i, t in enumerate(spec.tokens)]
    return Base(base, tokens, False, spec.special_tokens, BPETokenizer.from_spec(spec, base),
                document=document, pattern=pattern)


def _tiktoken_base(base: str, spec: EncoderSpec) -> Base:
    """The base of a tiktoken encoding `spec`."""
    pattern = count_pattern(spec, base)
    return Base(base, spec.tokens, False, spec.special_tokens, BPETokenizer.from_spec(spec, base), ranks=spec,
                pattern=pattern)


def extended_model(model: Model, out: dict, specials: str) -> Model:
    """`model` with the new tokens and merges of `extend_merges`'s output `out`; every token's count is
    its frequency in the new corpus after the merges."""
    if specials not in SPECIALS:
        raise SqltokError(f"specials must be one of {SPECIALS}, not {specials!r}")
    tokens = model.tokens + out["tokens"].to_pylist()
    if specials == "keep":
        taken = sorted(i for i in model.special_tokens.values() if i >= len(model.tokens))
        if taken and taken[0] < len(tokens):
            raise SqltokError(f"special token id {taken[0]} is where new token {taken[0]} goes: keeping the "
                              "special tokens' ids needs ids after them, and a model's token ids have no gaps; "
                              "let them move after the new tokens (specials='move', --specials move)")
        moved = dict(model.special_tokens)
    else:
        moved = {s: len(tokens) + k for k, s in enumerate(sorted(model.special_tokens, key=model.special_tokens.get))}
    merges = model.merges + [Merge(*m) for m in zip(*(out[k].to_pylist()
                                                       for k in ("left", "right", "count", "flag", "new_id")))]
    return with_fields(model, tokens=tokens, token_counts=out["token_counts"].to_pylist(),
                   is_super=[False] * len(tokens), merges=merges, special_tokens=moved)


@interruptible
def extend_model(con: duckdb.DuckDBPyConnection, base: str, source: Source | str, add: int, model: str, *,
                 specials: str = "move", replace: bool = False, progress: bool = False) -> ExtendReport:
    """Learn up to `add` merges on `source` on top of `base` (a stored model's name, a reference `.model`
    file, an HF byte-level BPE tokenizer.json or a `.tiktoken` file) and store the result as model
    `model` (a sqltok model in the store's tables, or the extended tokenizer.json or tiktoken encoding
    kept whole), with its regression report."""
    if not isinstance(add, int) or isinstance(add, bool) or add < 1:
        raise SqltokError(f"add must be a positive number of merges, not {add!r}")
    if specials not in SPECIALS:
        raise SqltokError(f"specials must be one of {SPECIALS}, not {specials!r}")
    register(con)
    ensure_schema(con)
    check_new_name(con, model, replace)
    watch = Stopwatch(con if progress else None)
    with watch("load_base"):
        old = load_base(con, base)
    with WorkTables(con) as work:
        with watch("pretokenize_and_count"):
            counts = count_corpus(con, source, old.script_aware, work, old.pattern)
        with watch("encode_pretokens"):
            table = counts.pretokens.arrow(con)
            sequences = old.tokenizer.encode_arrow(column(table, 0), threads=default_threads())
        with watch("merge"):
            bar = Progress("merging", add, "merges") if progress else None
            out = extend_merges(sequences, column(table, 1), old.tokens, add,
                                progress=None if bar is None else (lambda done, size: bar.update(done)))
            if bar is not None:
                bar.close()
        with watch("build"):
            if old.model is not None:
                new = extended_model(old.model, out, specials)
                after = BPETokenizer.from_model(new, model)
            elif old.ranks is not None:
                ranks = extended_ranks(old.ranks, out["tokens"].to_pylist(), specials, model)
                kept = ModelFile("bpe", "tiktoken-encoding", encoding_document(ranks))
                after = BPETokenizer.from_spec(ranks, model)
            else:
                doc, _ = extended_document(old.document, old.tokens, out, specials)
                after = BPETokenizer.from_spec(spec_from_hf_json(doc, model), model)
        with watch("store"), transaction(con):
            delete_rows(con, model)
            if old.model is not None:
                save_model(con, model, new, counts.stats.model_info())
            else:
                save_model_file(con, model, kept if old.ranks is not None else ModelFile("bpe", "hf-bpe", document_bytes(doc)),
                                after.n_vocab, {"extends": base, "merges_added": len(out["left"])},
                                counts.stats.model_info())
            save_pretoken_counts(con, model, counts.pretokens.table)
        with watch("regression"):
            report = regression(con, counts.query, old.tokenizer, after, old.tokens)
    return ExtendReport(model, base, len(out["left"]), len(out["tokens"]), after.n_vocab,
                        {s: (i, after.special_tokens[s]) for s, i in old.special_tokens.items()}, report,
                        watch.seconds)
