"""Language identification: ISO 639-1 code and confidence per document, from py3langid's model.

py3langid (a fork of langid.py) ships its naive Bayes model inside the PyPI package, so nothing is
downloaded at run time. On the labelled fixture corpora (12 languages, up to 150 documents each,
`bench/prepare.py --tasks accuracy`) it was right on 97.9% of the documents, lingua-language-detector
(high accuracy, all languages) on 93.2% (it loses Arabic and Greek pages that mix in English), and it
was 8x faster called from Python. Its scoring loop runs here in Cython (`_language.pyx`) over whole
Arrow batches with the same results as `py3langid.classify` (the test suite compares them); sqltok is
right on 97.5%, the rest being the texts it leaves undecided below `min_confidence`.

Its classes are ISO 639-1 codes plus a few ISO 639-3 ones; those whose macrolanguage has an ISO 639-1
code count as it (`ary`, `arz` are Arabic: `ar`; `yue`, `wuu` are Chinese: `zh`), the others, and
`zxx` (no linguistic content), are undecided: NULL, like texts without a single letter n-gram and
texts whose best probability is below `min_confidence`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from py3langid.langid import MODEL_FILE, LanguageIdentifier

from sqltok.normalizers._normalize import normalize_arrow

from ._language import score_arrow

# ISO 639-3 classes of py3langid and the ISO 639-1 code of their macrolanguage.
MACROLANGUAGE = {"ary": "ar", "arz": "ar", "yue": "zh", "wuu": "zh", "gug": "gn", "uzs": "uz"}
DEFAULT_MIN_CONFIDENCE = 0.3


@dataclass(frozen=True)
class _Model:
    nextmove: np.ndarray
    row_of: np.ndarray
    output: np.ndarray
    ptc: np.ndarray
    pc: np.ndarray
    alias: np.ndarray
    codes: pa.Array  # per class: its ISO 639-1 code, NULL when it has none


@cache
def _model() -> _Model:
    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    alias = np.full(len(ident.nb_classes), -1, np.int32)
    first: dict[str, int] = {}
    for i, c in enumerate(ident.nb_classes):  # one label in two columns (sr in Cyrillic and Latin)
        if c in first:
            alias[i] = first[c]
        else:
            first[c] = i
    codes = [MACROLANGUAGE.get(c, c if len(c) == 2 else None) for c in ident.nb_classes]
    return _Model(np.frombuffer(ident.tk_nextmove, np.uint32), np.frombuffer(ident.tk_row, np.uint16),
                  np.asarray(ident.tk_output, np.int32), np.ascontiguousarray(ident.nb_ptc, np.float32),
                  np.ascontiguousarray(ident.nb_pc, np.float32), alias, pa.array(codes, pa.string()))


def _prepared(texts: pa.Array, threads: int) -> pa.Array:
    """The texts as py3langid scores them: NFC, and lowercased when every cased letter is upper."""
    texts = normalize_arrow(texts, "NFC", threads)
    if pa.types.is_string_view(texts.type):  # the normalizer's output when a row changed
        texts = texts.cast(pa.large_string())
    upper = pc.utf8_is_upper(texts).fill_null(False)
    if pc.any(upper).as_py():  # Arrow's test, narrowed to Python's (Other_Lowercase letters: º, ª)
        rows = pc.indices_nonzero(upper).to_pylist()
        exact = np.zeros(len(texts), bool)
        exact[[r for r in rows if texts[r].as_py().isupper()]] = True
        texts = pc.if_else(pa.array(exact), pc.utf8_lower(texts), texts)
    return texts


def language_arrays(texts: pa.Array, threads: int = 1,
                    min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> tuple[pa.Array, pa.Array]:
    """(ISO 639-1 code or NULL, confidence in [0, 1] or NULL) per document of a string array."""
    m = _model()
    best, conf = score_arrow(_prepared(texts, threads), m.nextmove, m.row_of, m.output, m.ptc, m.pc, m.alias,
                             threads)
    scored = best >= 0
    codes = m.codes.take(pa.array(np.where(scored, best, 0), mask=~scored))
    decided = pc.and_(pc.is_valid(codes), pa.array(conf >= min_confidence))
    return (pc.if_else(decided, codes, pa.scalar(None, pa.string())),
            pa.array(conf.astype(np.float64), mask=~scored))


def detect_language(text: str, min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> str | None:
    """The ISO 639-1 code of `text`'s language, or None when undecided."""
    return language_arrays(pa.array([text], pa.string()), 1, min_confidence)[0][0].as_py()
