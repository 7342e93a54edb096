"""HF `BertNormalizer`'s switches as sqltok's BERT normalizer takes them."""
from __future__ import annotations


def bert_switches(clean_text: bool = True, handle_chinese_chars: bool = True, strip_accents: bool | None = None,
                  lowercase: bool = True) -> tuple[bool, bool, bool, bool]:
    """(clean_text, handle_chinese_chars, strip_accents, lowercase), with strip_accents None meaning
    "as lowercase", as in HF."""
    return (bool(clean_text), bool(handle_chinese_chars),
            bool(lowercase if strip_accents is None else strip_accents), bool(lowercase))
