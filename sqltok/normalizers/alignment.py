"""Which original character each character of a normalized text stands for, as HF `tokenizers`
aligns them (its `NFC` normalizer, and the NFD inside BertNormalizer's accent stripping), so that
offsets into the normalized text map back to the text.

HF tags each output character of the normalization with a change: 0 when it replaces the next
input character, -n when it replaces it and the n after it, +1 when it is inserted (it then shares
the previous character's alignment). Decomposing a character gives its first part 0 and the others
+1; canonical reordering moves the tags with the characters; composing a mark into its starter adds
the mark's tag minus one to the starter's. The alignment is then read off in order: a character
tagged c <= 0 stands for the input character at the current position, which advances by 1 - c.
So a starter and an accent composed into one character stand for the starter alone.

NFD is character by character except where reordering moves a part: `nfd_origin` follows the same
rules. NFC works character by character between ASCII characters (an ASCII character never composes with
what precedes it and stops reordering), so only the runs that are not NFC already are worked out.
"""
from __future__ import annotations

import numpy as np
import regex
import unicodedata2

_RUNS = regex.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")
_MARKS = regex.compile(r"\p{M}")


def nfc_origin(text: str) -> np.ndarray | None:
    """For each character of NFC(text), the index in `text` of the character HF aligns it with; None
    when `text` is in NFC (each character stands for itself)."""
    if _is_nfc(text):
        return None
    origin: list[int] = []
    done = 0
    for m in _RUNS.finditer(text):
        run = m.group()
        if _is_nfc(run):
            continue
        origin.extend(range(done, m.start()))
        origin.extend(m.start() + k for k in _run_origin(run))
        done = m.end()
    origin.extend(range(done, len(text)))
    return np.array(origin, np.int64)


def _is_nfc(text: str) -> bool:
    return unicodedata2.normalize("NFC", text) == text


def nfd_origin(text: str) -> tuple[str, list[int]] | None:
    """(NFD(text), for each of its characters the index in `text` HF aligns it with), or None when
    NFD works character by character on `text` (each part stands for the character it came from)."""
    if not _MARKS.search(text):  # reordering moves combining marks only
        return None
    tagged = _decomposed(text)
    if not _reorder(tagged):
        return None
    return "".join(c for c, _ in tagged), _positions(tagged)


def _run_origin(run: str) -> list[int]:
    """`nfc_origin` of one run, as indices into the run."""
    tagged = _decomposed(run)
    _reorder(tagged)
    composed = _compose(tagged)
    if "".join(c for c, _ in composed) != unicodedata2.normalize("NFC", run):
        raise ValueError(f"NFC alignment of {run!r} does not give its NFC form")
    return _positions(composed)


def tagged_normalization(text: str, form: str) -> list[tuple[str, int]]:
    """`form` (NFC, NFD, NFKC, NFKD) of `text` as HF's `unicode_normalization_alignments` gives it:
    each output character with its change (see the module's docstring); ValueError when that
    does not give the form Unicode defines."""
    tagged = _decomposed(text, "NFKD" if form in ("NFKC", "NFKD") else "NFD")
    _reorder(tagged)
    if form in ("NFC", "NFKC"):
        tagged = _compose(tagged)
    if "".join(c for c, _ in tagged) != unicodedata2.normalize(form, text):
        raise ValueError(f"{form} alignment of {text!r} does not give its {form} form")
    return tagged


def _decomposed(text: str, form: str = "NFD") -> list[tuple[str, int]]:
    """Each character's decomposition (canonical, or with `form` NFKD compatibility), tagged: 0 for
    its first part, +1 for the others."""
    return [(part, 0 if k == 0 else 1) for c in text for k, part in enumerate(unicodedata2.normalize(form, c))]


def _positions(tagged: list[tuple[str, int]]) -> list[int]:
    """The input character each tagged output character stands for, read off in order."""
    origin, at = [], 0
    for _, change in tagged:
        if change > 0:
            origin.append(max(at - 1, 0))
        else:
            origin.append(at)
            at += 1 - change
    return origin


def _reorder(tagged: list[tuple[str, int]]) -> bool:
    """Canonical ordering in place: each run of non-starters sorted by combining class, stably;
    whether anything moved."""
    moved = False
    i = 0
    while i < len(tagged):
        if unicodedata2.combining(tagged[i][0]) == 0:
            i += 1
            continue
        j = i
        while j < len(tagged) and unicodedata2.combining(tagged[j][0]) != 0:
            j += 1
        run = sorted(tagged[i:j], key=lambda t: unicodedata2.combining(t[0]))
        moved = moved or run != tagged[i:j]
        tagged[i:j] = run
        i = j
    return moved


def _compose(tagged: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Canonical composition of a reordered, decomposed sequence, carrying the tags."""
    out: list[tuple[str, int]] = []
    starter = -1       # index in out of the last starter
    last_class = -1    # combining class of the last character kept after it (-1: none)
    for c, change in tagged:
        cls = unicodedata2.combining(c)
        if starter >= 0 and (last_class == -1 or (last_class != 0 and last_class < cls)):
            pair = out[starter][0] + c
            joined = unicodedata2.normalize("NFC", pair)
            if len(joined) == 1:
                out[starter] = (joined, out[starter][1] + change - 1)
                continue
        if cls == 0:
            starter, last_class = len(out), -1
        else:
            last_class = cls
        out.append((c, change))
    return out
