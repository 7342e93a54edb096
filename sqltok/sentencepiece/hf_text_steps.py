"""HF normalizer steps that come before the Precompiled charsmap in `transformers`' ALBERT and XLNet
converters (Replace of a string, NFKD, StripAccents, Lowercase; NFC, NFD and NFKC too), run over a
whole Arrow column with pyarrow's string kernels before the SentencePiece encoder sees the text.

Each equals HF's step: Replace is a literal, non-overlapping, left-to-right replacement;
NF* is Unicode normalization; StripAccents drops every General_Category=Mark character (HF's
`is_combining_mark`); Lowercase is Rust's `char::to_lowercase`, character by character, which is
Unicode's simple lowercase mapping but for U+0130 (İ), whose full mapping "i̇" Rust follows
(no final-sigma rule: "Σ" is always "σ").
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

#: One step: ("replace", pattern, content), ("normalize", "NFKD"), ("strip_accents",), ("lowercase",).
TextStep = tuple[str, ...]

_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
_CAPITAL_I_DOT = "\u0130"


def text_step_of(step: object) -> TextStep | None:
    """The step a normalizer object is, or None when it is none of these."""
    if not isinstance(step, dict):
        return None
    kind = step.get("type")
    if kind in _FORMS:
        return ("normalize", kind)
    if kind == "StripAccents":
        return ("strip_accents",)
    if kind == "Lowercase":
        return ("lowercase",)
    pattern = step.get("pattern")
    if kind == "Replace" and isinstance(pattern, dict) and set(pattern) == {"String"} \
            and isinstance(pattern["String"], str) and pattern["String"] and isinstance(step.get("content"), str):
        return ("replace", pattern["String"], step["content"])
    return None


def apply_text_steps(steps: tuple[TextStep, ...], texts: pa.Array) -> pa.Array:
    """`texts` (a large_string array) after each step in order; NULL stays NULL."""
    for step in steps:
        if step[0] == "replace":
            texts = pc.replace_substring(texts, pattern=step[1], replacement=step[2])
        elif step[0] == "normalize":
            texts = pc.utf8_normalize(texts, form=step[1])
        elif step[0] == "strip_accents":
            texts = pc.replace_substring_regex(texts, pattern=r"\p{M}", replacement="")
        else:
            texts = pc.utf8_lower(pc.replace_substring(texts, pattern=_CAPITAL_I_DOT, replacement="i\u0307"))
    return texts
