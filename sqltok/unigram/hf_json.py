"""A trained Unigram model as a Hugging Face `tokenizers` tokenizer.json, written from its pieces the
way `transformers`' SentencePiece converter builds one (`build_tokenizer_from_spm_proto`, legacy):
the Unigram model (pieces and scores by id), the precompiled charsmap and SentencePiece's whitespace
rules as normalizers, Metaspace for the dummy prefix (Replace(\\z -> ▁) for
treat_whitespace_as_suffix's dummy suffix, which no Metaspace adds), user-defined pieces split off whole after
normalization (as SentencePiece finds them, so they are not added tokens, which HF would cut out of
the text before normalizing it), control pieces as special added tokens, and the matching decoders."""
from __future__ import annotations

import base64
import json
import re

from sqltok.unigram.spec import CONTROL, USER_DEFINED, UnigramSpec


def _replace(pattern: str, content: str, regex: bool) -> dict:
    return {"type": "Replace", "pattern": {"Regex" if regex else "String": pattern}, "content": content}


def tokenizer_json(pieces: list[tuple[str, float, int]], spec: UnigramSpec, charsmap: bytes) -> str:
    """The tokenizer.json text of the model whose pieces by id are `pieces` (piece, score, type)."""
    normalizers = []
    if charsmap:
        normalizers.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    if spec.remove_extra_whitespaces:
        normalizers += [_replace(r"\A +| +\z", "", True), _replace(" {2,}", " ", True)]
    normalizers.append(_replace(" ", "▁", False))
    suffix = spec.add_dummy_prefix and spec.treat_whitespace_as_suffix   # the dummy "▁" goes at the end
    if suffix:
        normalizers.append(_replace(r"\z", "▁", True))
    elif spec.add_dummy_prefix:
        normalizers.append(_replace(r"\A▁", "▁▁", True))
    user_defined = [p for p, _, kind in pieces if kind == USER_DEFINED]
    pre = []
    if spec.add_dummy_prefix and not suffix:
        pre.append({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False})
    if user_defined:
        pattern = "|".join(re.escape(p) for p in sorted(user_defined, key=len, reverse=True))
        pre.append({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False})
    decoders = [_replace("▁", " ", False)]
    if spec.byte_fallback:
        decoders.append({"type": "ByteFallback"})
    if spec.add_dummy_prefix:
        decoders += [{"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]
    elif spec.byte_fallback:
        decoders.append({"type": "Fuse"})
    added = [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True}
             for i, (p, _, kind) in enumerate(pieces) if kind == CONTROL]
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre} if pre else None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {"type": "Unigram", "unk_id": spec.unk_id if spec.unk_id >= 0 else None,
                  "vocab": [[p, score] for p, score, _ in pieces], "byte_fallback": spec.byte_fallback},
    }
    return json.dumps(doc, ensure_ascii=False, indent=2)
