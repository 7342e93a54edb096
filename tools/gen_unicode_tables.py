"""Generate `sqltok/pretokenizer/unicode_tables.h`: per code point class bits and Script, Unicode 17.0.0.

The pretokenizer needs, for every code point, the classes its patterns test (`\\p{Lu}`, `\\p{Ll}`,
`\\p{Lt}`, `\\p{Lm}`, `\\p{Lo}`, `\\p{M}`, `\\p{N}`, `\\s`; `\\p{L}` is their letter union) and its
Script (Unicode `Scripts.txt`; code points it does not list are Unknown).

Sources:
- general categories: the PyPI package `unicodedata2==17.0.0`;
- whitespace `\\s`: the `regex` module's `\\s` for str patterns is the Unicode White_Space property
  (PropList.txt), which is general category Zs, Zl or Zp plus U+0009..U+000D and U+0085;
- Script: `data/unicode/Scripts.txt` (17.0.0).
When `regex` is installed, every class and every script is checked against its verdict over all
0x110000 code points.

Layout: a two-stage table of 256-code-point pages. `UC_PAGE[cp >> 8]` picks a deduplicated block of
`UC_BLOCK`; each 16-bit entry holds the class bits (low byte) and the script code (high byte).
Script codes: Unknown 0, Common 1, Inherited 2, then the scripts that use the script-specific pattern
(Han, Hiragana, Katakana, Thai, Myanmar, Khmer, Lao: 3..9), then every other script alphabetically.

Regenerate: `python tools/gen_unicode_tables.py` (from the repository root).
"""
from __future__ import annotations

from pathlib import Path

import unicodedata2

UNICODE_VERSION = "17.0.0"
ROOT = Path(__file__).resolve().parents[1]
SCRIPTS_TXT = ROOT / "data" / "unicode" / "Scripts.txt"
HEADER = ROOT / "sqltok" / "pretokenizer" / "unicode_tables.h"
N_CODE_POINTS = 0x110000
PAGE = 256

# (macro suffix, bit, general categories or None for whitespace, regex property)
CLASSES = [
    ("LU", 1, {"Lu"}, r"\p{Lu}"),
    ("LL", 2, {"Ll"}, r"\p{Ll}"),
    ("LT", 4, {"Lt"}, r"\p{Lt}"),
    ("LM", 8, {"Lm"}, r"\p{Lm}"),
    ("LO", 16, {"Lo"}, r"\p{Lo}"),
    ("M", 32, {"Mn", "Mc", "Me"}, r"\p{M}"),
    ("N", 64, {"Nd", "Nl", "No"}, r"\p{N}"),
    ("WS", 128, None, r"\s"),
]
SPECIFIC_SCRIPTS = ["Han", "Hiragana", "Katakana", "Thai", "Myanmar", "Khmer", "Lao"]
FIXED_SCRIPTS = ["Unknown", "Common", "Inherited"]


def is_white_space(cp: int, category: str) -> bool:
    """Unicode White_Space (PropList.txt), which is what `regex` means by `\\s`."""
    return category in ("Zs", "Zl", "Zp") or 0x09 <= cp <= 0x0D or cp == 0x85


def class_bits() -> list[int]:
    """Class bits of every code point, from unicodedata2 general categories."""
    assert unicodedata2.unidata_version == UNICODE_VERSION, unicodedata2.unidata_version
    bits = []
    for cp in range(N_CODE_POINTS):
        cat = unicodedata2.category(chr(cp))
        value = 0
        for _, bit, cats, _ in CLASSES:
            if (cat in cats) if cats is not None else is_white_space(cp, cat):
                value |= bit
        bits.append(value)
    return bits


def read_scripts(path: Path) -> list[str]:
    """Script name of every code point per Scripts.txt (unlisted code points are Unknown)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# Scripts-{UNICODE_VERSION}.txt"), "Scripts.txt must be Unicode 17.0.0"
    scripts = ["Unknown"] * N_CODE_POINTS
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        cps, name = (field.strip() for field in data.split(";"))
        first, _, last = cps.partition("..")
        for cp in range(int(first, 16), int(last or first, 16) + 1):
            scripts[cp] = name
    return scripts


def script_names(scripts: list[str]) -> list[str]:
    """Script codes in order: fixed ones, script-specific ones, then the others alphabetically."""
    others = sorted(set(scripts) - set(FIXED_SCRIPTS) - set(SPECIFIC_SCRIPTS))
    return FIXED_SCRIPTS + SPECIFIC_SCRIPTS + others


def check_against_regex(bits: list[int], scripts: list[str]) -> None:
    """Assert that every class and script equals the `regex` module's verdict on every code point."""
    try:
        import regex
    except ImportError:
        print("regex not installed: tables not cross-checked")
        return
    everything = "".join(map(chr, range(N_CODE_POINTS)))

    def members(prop: str) -> set[int]:
        return {m.start() for m in regex.finditer(prop, everything)}

    for name, bit, _, prop in CLASSES:
        ours = {cp for cp, value in enumerate(bits) if value & bit}
        assert ours == members(prop), f"class {name} differs from regex {prop}"
    by_script: dict[str, set[int]] = {}
    for cp, name in enumerate(scripts):
        by_script.setdefault(name, set()).add(cp)
    for name, cps in by_script.items():
        assert cps == members(rf"\p{{sc={name}}}"), f"script {name} differs from regex"
    print("tables equal regex", regex.__version__, "on all code points")


def two_stage(values: list[int]) -> tuple[list[int], list[list[int]]]:
    """Split values into 256-entry pages; return the page index and the deduplicated blocks."""
    blocks: list[list[int]] = []
    seen: dict[tuple[int, ...], int] = {}
    pages = []
    for start in range(0, N_CODE_POINTS, PAGE):
        block = tuple(values[start:start + PAGE])
        if block not in seen:
            seen[block] = len(blocks)
            blocks.append(list(block))
        pages.append(seen[block])
    assert len(blocks) <= 256, "page index must fit in uint8"
    assert pages[0] == 0, "uc_entry reads page 0 directly"
    return pages, blocks


def c_array(ctype: str, name: str, values: list[int], per_line: int = 24) -> str:
    rows = [", ".join(map(str, values[i:i + per_line])) for i in range(0, len(values), per_line)]
    return f"static const {ctype} {name}[{len(values)}] = {{\n" + ",\n".join(rows) + "\n};\n"


def render(pages: list[int], blocks: list[list[int]], names: list[str]) -> str:
    class_macros = "\n".join(f"#define UC_{name} {bit}" for name, bit, _, _ in CLASSES)
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"""/* Unicode {UNICODE_VERSION} character data for the sqltok pretokenizer.
 * GENERATED by tools/gen_unicode_tables.py from data/unicode/Scripts.txt (Scripts-{UNICODE_VERSION})
 * and unicodedata2 {UNICODE_VERSION} (general categories); checked against the `regex` module.
 * Do not edit: regenerate with `python tools/gen_unicode_tables.py`. */
#ifndef SQLTOK_UNICODE_TABLES_H
#define SQLTOK_UNICODE_TABLES_H
#include <stdint.h>

#define UC_UNICODE_VERSION "{UNICODE_VERSION}"

/* Class bits (low byte of an entry). \\s is White_Space. */
{class_macros}
#define UC_L (UC_LU | UC_LL | UC_LT | UC_LM | UC_LO)
#define UC_UPPERISH (UC_LU | UC_LT | UC_LM | UC_LO | UC_M) /* [\\p{{Lu}}\\p{{Lt}}\\p{{Lm}}\\p{{Lo}}\\p{{M}}] */
#define UC_LOWERISH (UC_LL | UC_LM | UC_LO | UC_M)        /* [\\p{{Ll}}\\p{{Lm}}\\p{{Lo}}\\p{{M}}] */

/* Script codes (high byte of an entry). */
#define SC_UNKNOWN 0
#define SC_COMMON 1
#define SC_INHERITED 2
#define SC_FIRST_SPECIFIC 3 /* Han, Hiragana, Katakana, Thai, Myanmar, Khmer, Lao */
#define SC_LAST_SPECIFIC {2 + len(SPECIFIC_SCRIPTS)}
#define SC_COUNT {len(names)}
static const char *const SC_NAMES[SC_COUNT] = {{{quoted}}};

{c_array("uint8_t", "UC_PAGE", pages)}
{c_array("uint16_t", "UC_BLOCK", [v for block in blocks for v in block])}
/* Entry of code point cp (cp <= 0x10FFFF): class bits | script << 8. Page 0 is block 0. */
static inline uint16_t uc_entry(uint32_t cp) {{
    if (cp < 0x100) return UC_BLOCK[cp];
    return UC_BLOCK[((uint32_t)UC_PAGE[cp >> 8] << 8) | (cp & 0xFF)];
}}

#endif
"""


def main() -> None:
    bits = class_bits()
    scripts = read_scripts(SCRIPTS_TXT)
    check_against_regex(bits, scripts)
    names = script_names(scripts)
    code = {name: i for i, name in enumerate(names)}
    pages, blocks = two_stage([b | code[s] << 8 for b, s in zip(bits, scripts)])
    HEADER.write_text(render(pages, blocks, names), encoding="utf-8")
    print(f"wrote {HEADER}: {len(blocks)} blocks, {len(names)} scripts")


if __name__ == "__main__":
    main()
