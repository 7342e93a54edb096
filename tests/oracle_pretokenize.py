"""Test oracle: the reference pretokenizer, spelled out in pure Python over `regex.findall`.

Script runs follow the reference `Pretokenizer.pretokenize` loop character by character, with the
Script property read from data/unicode/Scripts.txt (unlisted code points are Unknown).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import regex

GPT4O_BRANCHES = [
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
]
REST = [r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"]
MAIN = regex.compile("|".join(GPT4O_BRANCHES + REST))
SPECIFIC = regex.compile("|".join([r" ?\p{L}\p{M}*"] + REST))
SPECIFIC_SCRIPTS = {"Han", "Hiragana", "Katakana", "Thai", "Myanmar", "Khmer", "Lao"}
SCRIPTS_TXT = Path(__file__).resolve().parents[1] / "data" / "unicode" / "Scripts.txt"


@lru_cache(maxsize=1)
def script_table() -> list[str]:
    """Script name of every code point."""
    scripts = ["Unknown"] * 0x110000
    for line in SCRIPTS_TXT.read_text(encoding="utf-8").splitlines():
        data = line.split("#", 1)[0].strip()
        if data:
            cps, name = (f.strip() for f in data.split(";"))
            first, _, last = cps.partition("..")
            for cp in range(int(first, 16), int(last or first, 16) + 1):
                scripts[cp] = name
    return scripts


def _findall(text: str, script: str | None) -> list[str]:
    return (SPECIFIC if script in SPECIFIC_SCRIPTS else MAIN).findall(text)


def pretokenize(text: str, script_aware: bool = True) -> list[str]:
    """The reference pretokens of `text`."""
    if not script_aware:
        return MAIN.findall(text)
    scripts = script_table()
    out: list[str] = []
    run_start, current, last_end = 0, None, 0  # current: None, "Common"/"Inherited" placeholder, or real
    for i, ch in enumerate(text):
        script = scripts[ord(ch)]
        if script == current:
            last_end = i + 1
        elif script == "Inherited":
            current = current or "Inherited"
            last_end = i + 1
        elif script in ("Common", "Unknown"):
            current = current or "Common"
        else:
            if current not in (None, "Common", "Inherited"):
                out += _findall(text[run_start:last_end], current)
                run_start = last_end
            current, last_end = script, i + 1
    if current is not None:
        out += _findall(text[run_start:], current)
    return out
