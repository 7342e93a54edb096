"""Balancing a corpus by language: its shares (documents and bytes), and target shares given as
ratios (`zh=4,en=4,fr=1,ko=1`), as a fully balanced mix, or by temperature (p(lang) ∝ n^α, as mT5 and
XLM-R sample). The shares and the resampling are the table macros of `sql/prepare_balance.sql`."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import duckdb

from sqltok.corpus.sources import quote_literal
from sqltok.errors import SqltokError


@dataclass(frozen=True)
class Share:
    lang: str | None
    documents: int
    bytes: int
    doc_share: float
    byte_share: float


def language_shares(con: duckdb.DuckDBPyConnection, source: str) -> list[Share]:
    """Documents and bytes per language of `source` (columns lang, text), largest first."""
    return [Share(*r) for r in con.execute("SELECT * FROM sqltok_language_shares(?)", [source]).fetchall()]


def parse_ratios(spec: str) -> dict[str, float]:
    """`zh=4,en=4,fr=1` as {"zh": 4.0, ...}; weights must be positive numbers."""
    out: dict[str, float] = {}
    for part in spec.split(","):
        lang, sep, weight = part.partition("=")
        lang = lang.strip()
        try:
            w = float(weight)
        except ValueError:
            w = float("nan")
        if not sep or not lang or not w == w:
            raise SqltokError(f"bad ratio {part!r} in {spec!r}: expected lang=weight, e.g. zh=4,en=4,fr=1")
        if w <= 0:
            raise SqltokError(f"the weight of {lang} must be positive, not {weight.strip()} (leave a language "
                              "out to drop it)")
        if lang in out:
            raise SqltokError(f"{lang} is given twice in {spec!r}")
        out[lang] = w
    return out


def target_shares(shares: list[Share], ratios: dict[str, float] | None = None, temperature: float | None = None,
                  uniform: bool = False) -> dict[str, float]:
    """Target document shares for the languages found: from `ratios`, by `temperature` α, or equal
    (`uniform`); exactly one of them. A language in `ratios` that the corpus lacks is warned about
    (with the shares found) and the others are renormalized."""
    if sum(x is not None and x is not False for x in (ratios, temperature, uniform)) != 1:
        raise SqltokError("give exactly one of target ratios, a temperature or a uniform mix")
    found = {s.lang: s.documents for s in shares if s.lang is not None}
    if not any(s.documents for s in shares):
        raise SqltokError("no document is left to balance: the input has none, or the steps before dropped them all")
    if not found:
        raise SqltokError("no document has a language: detect languages first (--detect-language)")
    if ratios is not None:
        missing = sorted(set(ratios) - set(found))
        if missing:
            have = ", ".join(f"{s.lang}={s.doc_share:.2%}" for s in shares if s.lang is not None)
            warnings.warn(f"the corpus has no documents in {', '.join(missing)}; its languages: {have}",
                          stacklevel=2)
        weights = {lang: w for lang, w in ratios.items() if lang in found}
        if not weights:
            raise SqltokError("none of the languages asked for is in the corpus")
    elif temperature is not None:
        if not 0.0 < temperature <= 1.0:
            raise SqltokError(f"the temperature α must be in (0, 1], not {temperature}")
        weights = {lang: n ** temperature for lang, n in found.items()}
    else:
        weights = dict.fromkeys(found, 1.0)
    total = sum(weights.values())
    return {lang: w / total for lang, w in weights.items()}


def balance_query(source: str, targets: dict[str, float], seed: int = 0) -> str:
    """`source` (columns doc_id, lang, text, ...) resampled to `targets`; adds a column `copy`."""
    keys = ", ".join(quote_literal(lang) for lang in targets)
    values = ", ".join(repr(float(share)) for share in targets.values())
    return f"SELECT * FROM sqltok_balance({quote_literal(source)}, MAP([{keys}], [{values}]), seed := {int(seed)})"
