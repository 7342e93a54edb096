"""Generate `sqltok/normalizers/normalization_tables.h`: Unicode 17.0.0 normalization data and the character
classes of Hugging Face's BERT normalizer and pre-tokenizer.

Normalization (NFC, NFD, NFKC, NFKD), from the PyPI package `unicodedata2==17.0.0`:
- canonical combining class of every code point;
- full canonical and full compatibility decompositions (Hangul syllables are left to the algorithm);
- primary composites (pairs whose composition is not excluded), as an open-addressing hash table;
- per form, "could normalization change this character": it changes when normalized alone or
  (composing forms) can combine with the character before it; with its combining class (bits 16..23 of
  the flags), that is the quick check: a run of such-free characters whose classes never go down is
  normalized, and a starter without the flag is a boundary nothing before it interacts with;
- per page, whether every character of it is such a free starter (a page the scan can skip).

BERT (`BertNormalizer`, `BertPreTokenizer`): what HF `tokenizers` 0.23.3 does to each code point,
read from `tokenizers` itself. Its Rust crates carry older Unicode data than 17.0 (format characters,
nonspacing marks, punctuation, a few decompositions), and ids must stay identical to HF's, so these
classes are HF's; the script prints how many code points differ from Unicode 17.0.

Layout: two-stage tables of 256-code-point pages (`X_PAGE[cp >> 8]` picks a deduplicated block of
`X_BLOCK`), built as `gen_unicode_tables.py` builds its own. Regenerate: `python tools/gen_normalization_tables.py` (needs `tokenizers` 0.23.3).
"""
from __future__ import annotations

from pathlib import Path

import unicodedata2 as U
from gen_unicode_tables import N_CODE_POINTS, PAGE, UNICODE_VERSION, c_array, two_stage

HF_TOKENIZERS_VERSION = "0.23.3"
ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "sqltok" / "normalizers" / "normalization_tables.h"
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
SURROGATES = range(0xD800, 0xE000)

# Flag bits (uint32 per code point; bits 16..23 hold the canonical combining class).
FLAGS = {
    "NF_CHANGE_NFD": 1, "NF_CHANGE_NFKD": 2, "NF_CHANGE_NFC": 4, "NF_CHANGE_NFKC": 8,
    "BERT_REMOVE": 16,      # clean_text drops it
    "BERT_SPACE": 32,       # clean_text makes it ' '
    "BERT_CJK": 64,         # handle_chinese_chars pads it with spaces
    "BERT_MN": 128,         # strip_accents drops it (after NFD)
    "BERT_DECOMP": 256,     # HF's NFD changes it alone or it has a non-zero combining class
    "BERT_LOWER": 512,      # lowercase changes it
    "BERT_SPLIT": 1024,     # the pre-tokenizer splits on it (whitespace)
    "BERT_PUNCT": 2048,     # the pre-tokenizer isolates it (punctuation)
}


def code_points() -> list[int]:
    return [cp for cp in range(N_CODE_POINTS) if cp not in SURROGATES]


def decompositions(form: str) -> dict[int, list[int]]:
    """Full decomposition of every code point that has one (Hangul syllables excluded)."""
    out = {}
    for cp in code_points():
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            continue
        d = U.normalize(form, chr(cp))
        if d != chr(cp):
            out[cp] = [ord(c) for c in d]
    return out


def compositions() -> dict[tuple[int, int], int]:
    """Primary composites: canonical pairs (a, b) -> c that NFC composes (exclusions left out)."""
    pairs = {}
    for cp in code_points():
        d = U.decomposition(chr(cp))
        if not d or d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()]
        if len(parts) == 2 and U.normalize("NFC", chr(parts[0]) + chr(parts[1])) == chr(cp):
            pairs[(parts[0], parts[1])] = cp
    return pairs


def nf_flags(pairs: dict[tuple[int, int], int]) -> list[int]:
    """The four "could normalization change it" bits and the combining class of every code point."""
    second = {b for _, b in pairs} | set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    flags = [0] * N_CODE_POINTS
    for cp in code_points():
        c = chr(cp)
        flags[cp] = U.combining(c) << 16
        for form in ("NFD", "NFKD", "NFC", "NFKC"):
            if U.normalize(form, c) != c or (form in ("NFC", "NFKC") and cp in second):
                flags[cp] |= FLAGS[f"NF_CHANGE_{form}"]
    return flags


def clean_pages(flags: list[int]) -> list[int]:
    """Per page, a bit per form (as NF_CHANGE_*) set when no character of it changes or has a class."""
    out = []
    for start in range(0, N_CODE_POINTS, PAGE):
        page = flags[start:start + PAGE]
        out.append(sum(bit for name, bit in FLAGS.items() if name.startswith("NF_CHANGE_")
                       and all(not (f & bit) and f >> 16 == 0 for f in page)))
    return out


def hf_per_char(normalizer, cps: list[int], sep: str) -> list[str]:
    """HF's output for each code point alone (joined by `sep`, which it leaves alone)."""
    out = normalizer.normalize_str(sep.join(chr(cp) for cp in cps)).split(sep)
    assert len(out) == len(cps)
    return out


def bert_data() -> tuple[list[int], dict[int, list[int]], dict[int, list[int]]]:
    """HF's BERT flags, NFD decompositions and lowercase mappings of every code point."""
    from tokenizers import __version__, normalizers, pre_tokenizers

    assert __version__ == HF_TOKENIZERS_VERSION, __version__

    def bert(**switches):
        return normalizers.BertNormalizer(**{"clean_text": False, "handle_chinese_chars": False,
                                             "strip_accents": False, "lowercase": False, **switches})

    flags = [0] * N_CODE_POINTS
    cps = [cp for cp in code_points() if cp not in (ord("Q"), ord("q"), 1)]
    for cp, o in zip(cps, hf_per_char(bert(clean_text=True), cps, "Q")):
        flags[cp] |= FLAGS["BERT_REMOVE"] if o == "" else FLAGS["BERT_SPACE"] if o == " " != chr(cp) else 0
    flags[1] |= FLAGS["BERT_REMOVE"]
    for cp, o in zip(cps, hf_per_char(bert(handle_chinese_chars=True), cps, "Q")):
        flags[cp] |= FLAGS["BERT_CJK"] if o != chr(cp) else 0
    nfd, lower = {}, {}
    for cp, o in zip(cps, hf_per_char(normalizers.NFD(), cps, "\x01")):
        if o != chr(cp):
            nfd[cp] = [ord(c) for c in o]
        if o != chr(cp) or U.combining(chr(cp)):
            flags[cp] |= FLAGS["BERT_DECOMP"]
    for cp, o in zip(cps, hf_per_char(bert(strip_accents=True), cps, "\x01")):
        # strip = NFD, then drop nonspacing marks: a code point is a mark when it alone disappears
        if o == "" and cp not in nfd:
            flags[cp] |= FLAGS["BERT_MN"]
    for cp, o in zip(cps, hf_per_char(bert(lowercase=True), cps, "\x01")):
        if o != chr(cp):
            lower[cp] = [ord(c) for c in o]
            flags[cp] |= FLAGS["BERT_LOWER"]
    for cp in (ord("Q"), ord("q")):
        if chr(cp).lower() != chr(cp):
            lower[cp] = [ord(chr(cp).lower())]
            flags[cp] |= FLAGS["BERT_LOWER"]
    pre = pre_tokenizers.BertPreTokenizer()
    for cp in code_points():
        words = [w for w, _ in pre.pre_tokenize_str(f"a{chr(cp)}a")]
        if words == ["a", "a"]:
            flags[cp] |= FLAGS["BERT_SPLIT"]
        elif words == ["a", chr(cp), "a"]:
            flags[cp] |= FLAGS["BERT_PUNCT"]
    hf_nfd = {cp: d for cp, d in nfd.items() if not HANGUL_FIRST <= cp <= HANGUL_LAST}
    return flags, hf_nfd, lower


def unicode17_differences(flags: list[int]) -> int:
    """How many code points HF's BERT classes put elsewhere than Unicode 17.0's categories would."""
    n = 0
    for cp in code_points():
        cat = U.category(chr(cp))
        removes = cp in (0, 0xFFFD) or (cat in ("Cc", "Cf", "Co", "Cs") and cp not in (9, 10, 13))
        n += removes != bool(flags[cp] & FLAGS["BERT_REMOVE"])
        n += (cat == "Mn") != bool(flags[cp] & FLAGS["BERT_MN"])
    return n


def mapping_table(maps: dict[int, list[int]], pool: list[int]) -> list[int]:
    """Per code point `offset << 8 | length` into `pool` (0: no mapping); appends to `pool`."""
    entries = [0] * N_CODE_POINTS
    where: dict[tuple[int, ...], int] = {}
    for cp, seq in sorted(maps.items()):
        key = tuple(seq)
        if key not in where:
            where[key] = len(pool)
            pool.extend(seq)
        assert len(seq) < 256
        entries[cp] = where[key] << 8 | len(seq)
    return entries


def compose_hash(a: int, b: int, mask: int) -> int:
    """Same as `nf_compose_slot` in the header."""
    return (((a << 21 | b) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) >> 40 & mask


def composition_table(pairs: dict[tuple[int, int], int]) -> tuple[list[int], list[int], int]:
    """Open-addressing table of `a << 21 | b` keys (0 = empty) and their composites."""
    size = 1
    while size < len(pairs) * 3:
        size <<= 1
    keys, values = [0] * size, [0] * size
    for (a, b), c in pairs.items():
        j = compose_hash(a, b, size - 1)
        while keys[j]:
            j = (j + 1) & (size - 1)
        keys[j], values[j] = a << 21 | b, c
    return keys, values, size - 1


def lookup(name: str, ctype: str, values: list[int]) -> str:
    """A two-stage table and its inline accessor `name_of(cp)`."""
    pages, blocks = two_stage(values)
    upper = name.upper()
    return (c_array("uint8_t", f"{upper}_PAGE", pages)
            + c_array(ctype, f"{upper}_BLOCK", [v for block in blocks for v in block])
            + f"static inline {ctype} {name}_of(uint32_t cp) {{\n"
            f"    return {upper}_BLOCK[((uint32_t){upper}_PAGE[cp >> 8] << 8) | (cp & 0xFF)];\n}}\n")


def main() -> None:
    assert U.unidata_version == UNICODE_VERSION, U.unidata_version
    pairs = compositions()
    flags = nf_flags(pairs)
    bert_flags, hf_nfd, lower = bert_data()
    flags = [a | b for a, b in zip(flags, bert_flags)]
    pool: list[int] = [0]
    canonical = mapping_table(decompositions("NFD"), pool)
    compat = mapping_table(decompositions("NFKD"), pool)
    bert_nfd = mapping_table(hf_nfd, pool)
    lowercase = mapping_table(lower, pool)
    keys, values, mask = composition_table(pairs)
    ccc = [U.combining(chr(cp)) if cp not in SURROGATES else 0 for cp in range(N_CODE_POINTS)]
    flag_macros = "\n".join(f"#define {k} {v}" for k, v in FLAGS.items())
    text = f"""/* Unicode {UNICODE_VERSION} normalization data, and HF tokenizers {HF_TOKENIZERS_VERSION}'s BERT classes.
 * GENERATED by tools/gen_normalization_tables.py from unicodedata2 {UNICODE_VERSION} (normalization) and
 * tokenizers {HF_TOKENIZERS_VERSION} (BertNormalizer / BertPreTokenizer classes, NFD, lowercase).
 * Do not edit: regenerate with `python tools/gen_normalization_tables.py`. */
#ifndef SQLTOK_NORMALIZATION_TABLES_H
#define SQLTOK_NORMALIZATION_TABLES_H
#include <stdint.h>

#define NF_UNICODE_VERSION "{UNICODE_VERSION}"
#define NF_HF_TOKENIZERS_VERSION "{HF_TOKENIZERS_VERSION}"
{flag_macros}

/* Mappings: entry = offset << 8 | length into NF_POOL (0: none). */
{c_array("uint32_t", "NF_POOL", pool)}
{lookup("nf_flags", "uint32_t", flags)}
{c_array("uint8_t", "NF_CLEAN_PAGE", clean_pages(flags))}
{lookup("nf_ccc", "uint8_t", ccc)}
{lookup("nf_canonical", "uint32_t", canonical)}
{lookup("nf_compat", "uint32_t", compat)}
{lookup("nf_bert_nfd", "uint32_t", bert_nfd)}
{lookup("nf_lower", "uint32_t", lowercase)}
/* Primary composites: key a << 21 | b (0 = empty slot), linear probing. */
#define NF_COMPOSE_MASK {mask}
{c_array("uint64_t", "NF_COMPOSE_KEYS", keys)}
{c_array("uint32_t", "NF_COMPOSE_VALUES", values)}
static inline uint32_t nf_compose_slot(uint32_t a, uint32_t b) {{
    return (uint32_t)((((uint64_t)a << 21 | b) * 0x9E3779B97F4A7C15ULL) >> 40) & NF_COMPOSE_MASK;
}}

#endif
"""
    HEADER.write_text(text, encoding="utf-8")
    print(f"wrote {HEADER}: {len(pairs)} compositions, pool {len(pool)} code points; "
          f"BERT classes differ from Unicode {UNICODE_VERSION} at {unicode17_differences(flags)} code points")


if __name__ == "__main__":
    main()
