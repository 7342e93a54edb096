"""Export a model as a Hugging Face `tokenizers` tokenizer.json (byte-level BPE).

The export is a BPE model (the vocabulary with the model's ids, the phase-1 merges in rank order,
`ignore_merges: false`) behind Split(main_regex, Isolated) + ByteLevel(use_regex=False), with a
ByteLevel decoder and the special tokens as added tokens. For a simple (non-script-aware) word
model it encodes exactly like the model: HF repeatedly merges the lowest-rank pair present,
leftmost first, which is the reference's "apply the lowest-index merge everywhere, left to right"
(the one exception is described at `_out_of_order_merges`).

Not checked, so know them: HF matches added tokens such as "<|endoftext|>" wherever they occur in
the input text (the model only when the caller allows special tokens), and HF's regex engine
(Oniguruma) may know fewer Unicode characters for \\p{...} classes than Python's `regex`.
"""
from __future__ import annotations

import json
import os
import warnings

from sqltok.bpe.byte_unicode import bytes_to_unicode_str
from sqltok.formats.errors import ExportError
from sqltok.bpe.model import Model


def to_hf_json(model: Model, lossy: bool = False) -> dict:
    """The tokenizer.json content of `model`, as `tokenizers` 0.23 `Tokenizer.save` writes it.

    Raises ExportError when HF would encode differently from the model (script-aware
    pre-tokenization, supermerges, merges HF can apply out of order); with `lossy=True`, returns
    the closest HF equivalent instead and warns (UserWarning) with what differs.
    """
    if not model.settings.get("main_regex"):
        raise ExportError("the model settings have no main_regex to pre-tokenize with")
    differences = _differences(model)
    if differences and not lossy:
        raise ExportError("a HF tokenizer.json cannot encode like this model: " + " ".join(differences)
                          + " Pass lossy=True (--lossy) to export the closest HF equivalent anyway.")
    if differences:
        warnings.warn("lossy HF export: " + " ".join(differences), UserWarning, stacklevel=2)
    return byte_level_document(model.settings["main_regex"], model.special_tokens, _bpe(model))


def byte_level_document(regex: str, special_tokens: dict[str, int], bpe: dict) -> dict:
    """A byte-level BPE tokenizer.json around its `model` object `bpe`: the regex split, the
    ByteLevel mapping and decoder, the special tokens as added tokens."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added_tokens(special_tokens),
        "normalizer": None,
        "pre_tokenizer": _pre_tokenizer(regex),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": bpe,
    }


def write_hf(model: Model, path: str | os.PathLike, lossy: bool = False) -> None:
    """Write `to_hf_json(model, lossy)` to `path`, formatted like `Tokenizer.save`."""
    text = json.dumps(to_hf_json(model, lossy), ensure_ascii=False, indent=2)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def _differences(model: Model) -> list[str]:
    """Sentences describing each way HF would encode differently from `model`."""
    found = []
    if model.script_aware:
        scripts = ", ".join(model.settings.get("script_specific_scripts") or [])
        found.append(
            "HF cannot cut text into runs of one Unicode script: the export pre-tokenizes all text "
            "with main_regex alone, so a pretoken can span two scripts, and runs of the "
            f"script-specific scripts ({scripts}) are not split with script_specific_regex "
            "(one letter per pretoken).")
    if model.method != "word":
        found.append(
            "HF merges only inside one pretoken, so it cannot apply supermerges across pretokens: "
            f"the export keeps the {sum(model.is_super)} super tokens in the vocabulary (same ids, so "
            f"they decode) but drops the {len(model.supermerges)} supermerges, and encodes with the "
            "phase-1 merges alone (the model's output with every super token split back into its "
            "phase-1 tokens).")
    names = {bytes_to_unicode_str(t) for t in model.tokens}
    taken = [s for s, _ in sorted(model.special_tokens.items(), key=lambda kv: kv[1]) if s in names]
    if taken:
        found.append(
            f"the special tokens {taken} are spelled like vocabulary tokens in HF's byte-level "
            "alphabet: HF gives such an added token the vocabulary token's id, not the model's, and "
            "numbers the special tokens after it one lower.")
    out_of_order = _out_of_order_merges(model)
    if out_of_order:
        found.append(
            f"{out_of_order} merges use a token that a later merge creates again (a merge whose "
            "result already existed): HF always applies the lowest-rank merge present, while the "
            "model never returns to a merge ranked below the last one applied, so pretokens where "
            "that later merge enables an earlier-ranked one encode differently.")
    return found


def _out_of_order_merges(model: Model) -> int:
    """Number of phase-1 merges that HF may apply where the model would not.

    A merge whose result already exists (a "duplicate-result" merge) adds no token. HF keys its
    merges by (left id, right id) -> (rank, result id), so such a merge keeps its own rank and
    yields the existing id: it loads fine and applies exactly when the model applies it. Ranks only
    disagree after it: applying merge r yields token t, and the new pairs around t normally rank
    above r (t did not exist before r). If t existed earlier, a merge s < r with t as operand can
    become applicable; HF applies it (lowest rank present), the model does not (it only looks at
    merges ranked above the last one applied). This counts such merges s; 0 means HF is exact.
    """
    ids = {token: i for i, token in enumerate(model.tokens)}
    last_maker: dict[int, int] = {}
    for rank, m in enumerate(model.merges):
        result = ids.get(model.tokens[m.left] + model.tokens[m.right])
        if result is None:
            raise ExportError(f"merge {rank} makes a token that is not in the vocabulary")
        last_maker[result] = rank
    return sum(1 for s, m in enumerate(model.merges)
               if max(last_maker.get(m.left, -1), last_maker.get(m.right, -1)) > s)


def _added_tokens(special_tokens: dict[str, int]) -> list[dict]:
    return [{"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for text, i in sorted(special_tokens.items(), key=lambda kv: kv[1])]


def _pre_tokenizer(regex: str) -> dict:
    """Split on the regex keeping every match as a pretoken (findall), then map bytes to chars."""
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ]}


def _bpe(model: Model) -> dict:
    """The BPE model: every token (super tokens too, so all ids decode) and the phase-1 merges."""
    names = [bytes_to_unicode_str(t) for t in model.tokens]
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        # True would emit any vocabulary token whole; the model does so only for tokens its merges reach.
        "ignore_merges": False,
        "vocab": {name: i for i, name in enumerate(names)},
        "merges": [[names[m.left], names[m.right]] for m in model.merges],
    }
