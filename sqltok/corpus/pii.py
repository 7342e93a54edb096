"""Finding and masking personal and secret data: e-mail addresses, phone numbers, public IP addresses,
payment card numbers, IBANs and credentials inside URLs.

Each kind is a regular expression for candidates and a validator that is code, not a guess: cards pass
the Luhn check and start like a card network's numbers, IBANs have their country's length and pass
ISO 7064 mod 97-10, IP addresses parse and are globally routable (`ipaddress.is_global`: private,
loopback, link-local, shared and documentation ranges are kept, as datatrove keeps them; an IPv4
address whose four parts are all below 32 reads as a section or version number, 4.2.13.1, and is kept
too), phone numbers have the digit count of their form. Where two finds overlap, the kind earlier in
`KINDS` wins. Names and places would need a named-entity model that ships inside a package, runs
offline and keeps up with a corpus; none is provided (spaCy's models, for one, are published outside
PyPI, and on PyPI only as third parties' re-uploads).
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from sqltok.errors import SqltokError

KINDS = ("credentials", "email", "iban", "card", "ip", "phone")
PLACEHOLDERS = {"email": "[EMAIL]", "phone": "[PHONE]", "ip": "[IP]", "card": "[CARD]", "iban": "[IBAN]",
                "credentials": "[CREDENTIALS]"}

# Length of an IBAN per country (the ISO 13616 registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a digit string (the last digit is the check digit)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_network_prefix(digits: str) -> bool:
    """True when the number starts and is as long as a card network's numbers (Visa, Mastercard,
    American Express, Discover, JCB, Diners Club, UnionPay)."""
    n, p2, p3, p4 = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    return ((digits[0] == "4" and n in (13, 16, 19))                                   # Visa
            or ((51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16)                     # Mastercard
            or (p2 in (34, 37) and n == 15)                                             # American Express
            or ((p4 == 6011 or p2 == 65 or 644 <= p3 <= 649) and 16 <= n <= 19)         # Discover
            or (3528 <= p4 <= 3589 and 16 <= n <= 19)                                   # JCB
            or ((p2 in (36, 38, 39) or 300 <= p3 <= 305) and 14 <= n <= 19)             # Diners Club
            or (p2 == 62 and 16 <= n <= 19))                                            # UnionPay


def iban_valid(iban: str) -> bool:
    """The country's length and the ISO 7064 mod 97-10 check of an IBAN without spaces."""
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit():
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def public_ip(text: str) -> bool:
    """True for an IPv4 or IPv6 address that is globally routable."""
    try:
        return ipaddress.ip_address(text).is_global
    except ValueError:
        return False


def _digits(s: str) -> str:
    return re.sub(r"[^0-9]", "", s)


def _iban_end(m: re.Match) -> int | None:
    """The end of the IBAN the candidate starts with: its country's length in characters (spaces
    between groups aside), when that prefix passes the checks."""
    length = IBAN_LENGTHS.get(m.group()[:2])
    text, seen = m.group(), 0
    for i, c in enumerate(text):
        seen += c != " "
        if seen == length:
            return m.start() + i + 1 if iban_valid(text[:i + 1].replace(" ", "")) and _ends_word(m, i + 1) else None
    return None


def _ends_word(m: re.Match, i: int) -> bool:
    rest = m.string[m.start() + i:m.start() + i + 1]
    return not rest or not rest.isalnum()


def _whole(check: Callable[[str], bool]) -> Callable[[re.Match], int | None]:
    return lambda m: m.end() if check(m.group()) else None


def _section_number(text: str) -> bool:
    """An IPv4-shaped number whose parts are all below 32 reads as a section or version number."""
    parts = text.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 32 for p in parts)


@dataclass(frozen=True)
class _Kind:
    pattern: re.Pattern
    end: Callable[[re.Match], int | None]  # where the find ends, or None when the candidate fails
    group: int = 0  # the group that is masked


def _compile(pattern: str) -> re.Pattern:
    """A pattern whose digits are ASCII digits (Python's \\d takes every Unicode digit, RE2's and the
    validators' do not); \\w stays Unicode, so that a letter of any script bounds a find."""
    return re.compile(pattern.replace(r"\d", "[0-9]"))


def _after_scheme(m: re.Match) -> int | None:
    """The end of the credentials when `://` follows a URL scheme: a letter at a word boundary, then
    letters, digits, + . - (looked for back from `://`, not by the pattern: a pattern that starts at
    every word boundary scanned each long run of such characters once per boundary in it, quadratic)."""
    text, i = m.string, m.start()
    while i > 0 and text[i - 1] in _SCHEME_CHARS:
        i -= 1
        if text[i].isalpha() and text[i].isascii() and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            return m.end(1)
    return None


_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_PHONE_END = r"(?![\w\-]|[.,]\d| \d)"
_KIND = {
    "credentials": _Kind(_compile(r"(?<=[A-Za-z0-9+.\-])://([^\s/?#@:]+:[^\s/?#@]+)@(?=[^\s/?#@])"),
                         _after_scheme, 1),
    "email": _Kind(_compile(r"(?<![\w.%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@"
                              r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w\-])"),
                   _whole(lambda t: ".." not in t)),
    "iban": _Kind(_compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?"), _iban_end),
    "card": _Kind(_compile(r"(?<![\w\-.])(?:\d{4}([ \-]?)\d{4}\1\d{4}\1\d{1,7}|\d{4}([ \-]?)\d{6}\2\d{4,5})"
                             r"(?![\w\-]|\.\d)"),
                  _whole(lambda t: card_network_prefix(d := _digits(t)) and luhn_valid(d))),
    "ip": _Kind(_compile(r"(?<![\w.:])(?:(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)"
                           r"|(?=[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:)[0-9A-Fa-f:]{2,39}(?:(?<=:)(?:\d{1,3}\.){3}\d{1,3})?"
                           r"(?![\w:]|\.\w))"),
                _whole(lambda t: public_ip(t) and not _section_number(t))),
    "phone": _Kind(_compile(
        r"(?<![\w+\-.])(?<!\d )(?:"
        r"\+\d{1,3}(?:[ .\-]?\(\d{1,4}\))?[ .\-]?\d{1,5}(?:[ .\-]?\d{2,5}){0,4}"   # E.164 with its separators
        r"|(?:1[ .\-])?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[.\- ])[2-9]\d{2}[.\- ]\d{4}"  # North American
        r"|1[3-9]\d(?:\d{8}|-\d{4}-\d{4}| \d{4} \d{4})"                  # Chinese mobile
        r"|0[1-9](?:[ .]\d{2}){4}"                                       # French pairs
        r"|0\d{1,4}[ /\-]\d{3,4}[ \-]?\d{3,4}"                           # European trunk prefix 0
        r")" + _PHONE_END),
        _whole(lambda t: _phone_digits_ok(t))),
}


# Per kind, an RE2 pattern (pyarrow's regex engine, run over a whole batch at once) that every text
# holding a find of the kind matches: the Python patterns above run only on the rows it selects.
PREFILTERS = {
    "credentials": r"://[^\s/?#@:]+:[^\s/?#@]+@",
    "email": r"[A-Za-z0-9._%+\-]@[A-Za-z0-9]",
    "iban": r"[A-Z]{2}\d{2} ?[A-Z0-9]{4}",
    "card": r"\d{4}[ \-]?\d{4}[ \-]?\d{4}|\d{4}[ \-]?\d{6}",
    "ip": r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d|:[0-9A-Fa-f]*:",
    "phone": r"\d(?:[ .\-/()]{0,2}\d){6}",
}


def _phone_digits_ok(s: str) -> bool:
    n = len(_digits(s))
    return 8 <= n <= 15 if s.startswith("+") else 9 <= n <= 12


@dataclass(frozen=True)
class Find:
    kind: str
    start: int  # code point offsets in the text, end exclusive
    end: int


def find_pii(text: str, kinds: Iterable[str] = KINDS) -> list[Find]:
    """The PII found in `text`, in text order; overlaps go to the kind earlier in `KINDS`."""
    wanted = check_kinds(kinds)
    taken: list[Find] = []
    for kind in KINDS:
        if kind not in wanted:
            continue
        k = _KIND[kind]
        for m in k.pattern.finditer(text):
            s, e = m.start(k.group), k.end(m)
            if e is not None and not any(f.start < e and s < f.end for f in taken):
                taken.append(Find(kind, s, e))
    return sorted(taken, key=lambda f: f.start)


def find_pii_arrow(texts: pa.Array, kinds: Iterable[str] = KINDS) -> list[list[Find] | None]:
    """`find_pii` of every text of a string array (None for NULL), each kind's pattern run only on
    the rows its prefilter selects."""
    wanted = [k for k in KINDS if k in check_kinds(kinds)]
    masks = [pc.match_substring_regex(texts, PREFILTERS[k]).fill_null(False).to_numpy(zero_copy_only=False)
             for k in wanted]
    out: list[list[Find] | None] = []
    for i, text in enumerate(texts.to_pylist()):
        row = [k for k, m in zip(wanted, masks) if m[i]]
        out.append(None if text is None else find_pii(text, row) if row else [])
    return out


def mask_pii(text: str, kinds: Iterable[str] = KINDS, placeholders: dict[str, str] | None = None) -> str:
    """`text` with every PII span of `kinds` replaced by its placeholder ([EMAIL], [PHONE], ...)."""
    return masked(text, find_pii(text, kinds), {**PLACEHOLDERS, **(placeholders or {})})


def masked(text: str, finds: list[Find], placeholders: dict[str, str]) -> str:
    """`text` with each of `finds` (in text order, not overlapping) replaced by its kind's placeholder."""
    out, at = [], 0
    for f in finds:
        out += (text[at:f.start], placeholders[f.kind])
        at = f.end
    out.append(text[at:])
    return "".join(out)


def check_kinds(kinds: Iterable[str]) -> set[str]:
    """The kinds as a set; an unknown kind is an error naming the known ones."""
    wanted = set(kinds)
    unknown = wanted - set(KINDS)
    if unknown:
        raise SqltokError(f"unknown PII kind(s) {sorted(unknown)}: expected some of {', '.join(KINDS)}")
    return wanted
