"""An HF byte-level BPE tokenizer.json as the base of an extension: its new tokens join `model.vocab`
(in GPT-2's byte-to-unicode spelling), its new merges are appended to `model.merges` (so HF, which
merges by rank, applies them after every base merge, as training saw the base's encoding), and the
added tokens in the way of the new ids move after them, each in `model.vocab` at its id (HF numbers
one missing there from len(vocab) on, whatever the file says). The result is kept in the database as
the tokenizer.json it is, and exports as that file.
"""
from __future__ import annotations

import json

from sqltok.bpe.byte_unicode import bytes_to_unicode_str
from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.errors import SqltokError
from sqltok.pretokenizer import patterns
from sqltok.pretokenizer._pieces import PRETOKEN_CUTS
from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pattern_id


def count_pattern(spec: EncoderSpec, name: str) -> str | None:
    """The pattern that counting splits a corpus with for the tokenizer.json or tiktoken base `spec`
    (a `PRETOKEN_CUTS` name; None: the GPT-4o pattern, as sqltok's own simple mode): the base's own,
    which must be one that sqltok's pretokenizer and counting know, with no normalizer."""
    if spec.normalizer is not None:
        raise SqltokError(f"{name}: a tokenizer.json with a normalizer ({spec.normalizer}) cannot be extended yet")
    if spec.pattern == patterns.O200K:
        return None
    pid = pattern_id(spec.pattern)
    family = next((f for f, i in PATTERN_IDS.items() if i == pid and f in PRETOKEN_CUTS), None)
    if family is None:
        raise SqltokError(f"{name}: extending needs the base's pretokens of the new corpus, and sqltok counts "
                          f"them with the patterns of GPT-4o, cl100k, Llama 3, Qwen 2 and GPT-2 only; this model "
                          f"splits with {spec.pattern!r}")
    return family


def first_new_id(doc: dict, tokens: list[bytes | None], specials: str) -> int:
    """Where the new tokens start: after the last id of a vocabulary entry that is no added token
    (`move`: the added tokens from there on move after the new ones), or after every id (`keep`)."""
    added = {t["id"] for t in doc.get("added_tokens") or []}
    if specials == "keep":
        return max(len(tokens), max(added, default=-1) + 1)
    return max(i for i, t in enumerate(tokens) if t is not None and i not in added) + 1


def extended_document(doc: dict, tokens: list[bytes | None], out: dict, specials: str) -> tuple[dict, dict[int, int]]:
    """The tokenizer.json `doc` extended by `extend_merges`'s output `out` (internal new ids from
    len(tokens) on), and the ids of the added tokens that moved (old -> new)."""
    n, start = len(tokens), first_new_id(doc, tokens, specials)
    new_tokens = out["tokens"].to_pylist()

    def final(i: int) -> int:
        return i if i < n else start + i - n

    model = dict(doc["model"], vocab=dict(doc["model"]["vocab"]), merges=list(doc["model"]["merges"]))
    doc = dict(doc, model=model, added_tokens=[dict(t) for t in doc.get("added_tokens") or []])
    moved = {i: start + len(new_tokens) + k for k, i in
             enumerate(sorted({t["id"] for t in doc.get("added_tokens") or [] if t["id"] >= start}))}
    for text, i in list(model["vocab"].items()):
        if i in moved:
            model["vocab"][text] = moved[i]
    in_vocab = set(model["vocab"].values())
    for t in doc["added_tokens"]:
        t["id"] = moved.get(t["id"], t["id"])
        if t["id"] not in in_vocab:   # HF numbers an added token missing from the vocabulary from
            model["vocab"][t["content"]] = t["id"]   # len(vocab) on, whatever the file says: keep its id there
    strings = {i: s for s, i in model["vocab"].items()}
    for k, b in enumerate(new_tokens):
        s = bytes_to_unicode_str(b)
        if s in model["vocab"]:
            raise SqltokError(f"new token {b!r} is spelled as vocabulary entry {s!r} already")
        model["vocab"][s] = start + k
        strings[start + k] = s
    as_lists = bool(model["merges"]) and isinstance(model["merges"][0], list)
    for left, right in zip(out["left"].to_pylist(), out["right"].to_pylist()):
        pair = [strings[final(left)], strings[final(right)]]
        model["merges"].append(pair if as_lists else " ".join(pair))
    return doc, moved


def document_bytes(doc: dict) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode()
