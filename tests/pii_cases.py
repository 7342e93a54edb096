"""A labelled PII test set: real paragraphs (tests/data/corpora_sample.jsonl) with PII of many shapes
inserted between words, and hard negatives (versions, dates, ISBNs, hashes, coordinates, arithmetic,
private addresses, numbers failing Luhn or mod 97) inserted the same way. Deterministic for a seed."""
from __future__ import annotations

import ipaddress
import json
import random
import string
from pathlib import Path

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def _luhn_complete(prefix: str, length: int, rnd: random.Random) -> str:
    body = prefix + "".join(rnd.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        digits = body + check
        total = sum((d * 2 - 9 if d * 2 > 9 else d * 2) if i % 2 else d
                    for i, d in enumerate(int(c) for c in reversed(digits)))
        if total % 10 == 0:
            return digits
    raise AssertionError


def _group(digits: str, sizes: list[int], sep: str) -> str:
    out, at = [], 0
    for s in sizes:
        out.append(digits[at:at + s])
        at += s
    return sep.join(out)


def card(rnd: random.Random) -> str:
    prefix, length = rnd.choice([("4", 16), ("4", 13), ("51", 16), ("55", 16), ("2221", 16), ("6011", 16),
                                 ("65", 16), ("3530", 16), ("62", 16), ("34", 15), ("37", 15)])
    digits = _luhn_complete(prefix, length, rnd)
    sep = rnd.choice(["", " ", "-"])
    if length == 15:
        return _group(digits, [4, 6, 5], sep)
    return _group(digits, [4, 4, 4, 4] if length == 16 else [4, 4, 4, 1], sep)


def bad_card(rnd: random.Random) -> str:
    good = card(rnd)
    i = max(i for i, c in enumerate(good) if c.isdigit())
    return good[:i] + str((int(good[i]) + rnd.randint(1, 9)) % 10) + good[i + 1:]


_IBAN_COUNTRIES = {"DE": 22, "GB": 22, "FR": 27, "NL": 18, "ES": 24, "IT": 27, "CH": 21, "BE": 16, "PL": 28,
                   "NO": 15, "AT": 20, "SE": 24}


def iban(rnd: random.Random, valid: bool = True) -> str:
    country = rnd.choice(sorted(_IBAN_COUNTRIES))
    n = _IBAN_COUNTRIES[country] - 4
    letters = country in ("GB", "NL")
    bban = ("".join(rnd.choice(string.ascii_uppercase) for _ in range(4)) if letters else "") + \
        "".join(rnd.choice(string.digits) for _ in range(n - (4 if letters else 0)))
    numeric = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    check = 98 - numeric % 97
    if not valid:
        check = (check + rnd.randint(1, 96)) % 97 + 2 if check < 97 else 3
        check = min(check, 98)
    text = f"{country}{check:02d}{bban}"
    return " ".join(text[i:i + 4] for i in range(0, len(text), 4)) if rnd.random() < 0.6 else text


def email(rnd: random.Random) -> str:
    first = rnd.choice(["john", "maria", "li.wei", "o'brien", "dev-ops", "a", "x_y", "sales+news", "ops2024"])
    first = first.replace("'", "")
    domain = rnd.choice(["example.com", "mail.example.org", "uni-bonn.de", "example.co.uk", "post.cz",
                         "startup.io", "sub.dept.example.net", "xn--bcher-kva.example"])
    return f"{first}{rnd.choice(['', '.smith', '99'])}@{domain}"


def phone(rnd: random.Random) -> str:
    d = lambda k: "".join(rnd.choice(string.digits) for _ in range(k))
    area = str(rnd.randint(2, 9)) + d(2)
    exch = str(rnd.randint(2, 9)) + d(2)
    mobile = "1" + str(rnd.randint(3, 9)) + d(9)
    return rnd.choice([
        f"({area}) {exch}-{d(4)}", f"{area}-{exch}-{d(4)}", f"{area}.{exch}.{d(4)}", f"1-{area}-{exch}-{d(4)}",
        f"+1 {area} {exch} {d(4)}", f"+1-{area}-{exch}-{d(4)}",
        mobile, f"{mobile[:3]} {mobile[3:7]} {mobile[7:]}", f"{mobile[:3]}-{mobile[3:7]}-{mobile[7:]}",
        f"+86 {mobile[:3]} {mobile[3:7]} {mobile[7:]}", f"+86{mobile}",
        f"+44 20 {d(4)} {d(4)}", f"020 {d(4)} {d(4)}", f"07{d(3)} {d(6)}", f"+44 7{d(3)} {d(6)}",
        f"+33 {rnd.randint(1, 9)} {d(2)} {d(2)} {d(2)} {d(2)}", f"0{rnd.randint(1, 9)} {d(2)} {d(2)} {d(2)} {d(2)}",
        f"0{rnd.randint(1, 9)}.{d(2)}.{d(2)}.{d(2)}.{d(2)}",
        f"+49 30 {d(8)}", f"030 {d(8)}", f"0171 {d(7)}", f"+49 171 {d(7)}", f"+39 06 {d(8)}",
        f"+34 91 {d(3)} {d(2)} {d(2)}", f"+31 20 {d(3)} {d(4)}", f"+41 44 {d(3)} {d(2)} {d(2)}",
    ])


def _random_ip(rnd: random.Random, public: bool) -> str:
    while True:
        if rnd.random() < 0.6:
            ip = ipaddress.IPv4Address(rnd.getrandbits(32))
        else:
            ip = ipaddress.IPv6Address((rnd.choice([0x2001, 0x2400, 0x2606, 0x2a00, 0x2c0f]) << 112)
                                       | rnd.getrandbits(100))
        if ip.is_global == public:
            return str(ip) if ip.version == 4 or rnd.random() < 0.5 else ip.exploded


def ip(rnd: random.Random) -> str:
    return _random_ip(rnd, True)


def credentials(rnd: random.Random) -> tuple[str, str]:
    """(URL, its user:password part)."""
    user = rnd.choice(["admin", "bob", "deploy", "u123", "svc-backup"])
    pw = rnd.choice(["s3cret", "hunter2", "P%40ssw0rd", "x9-Y8_z7", "correct.horse"])
    scheme, host = rnd.choice([("https", "db.example.com/path"), ("ftp", "files.example.org/pub/"),
                               ("postgres", "db.internal:5432/app"), ("redis", "cache.example.net:6379")])
    return f"{scheme}://{user}:{pw}@{host}", f"{user}:{pw}"


def negative(rnd: random.Random) -> str:
    d = lambda k: "".join(rnd.choice(string.digits) for _ in range(k))
    hexs = lambda k: "".join(rnd.choice("0123456789abcdef") for _ in range(k))
    return rnd.choice([
        lambda: f"{rnd.randint(0, 12)}.{rnd.randint(0, 30)}.{rnd.randint(0, 99)}",       # versions
        lambda: f"v{rnd.randint(1, 9)}.{rnd.randint(0, 9)}.{rnd.randint(0, 9)}.{rnd.randint(0, 9)}",
        lambda: f"10.0.{rnd.randint(10000, 22631)}.{rnd.randint(1, 999)}",
        lambda: f"{rnd.randint(1900, 2099)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",  # dates
        lambda: f"{rnd.randint(1, 28):02d}/{rnd.randint(1, 12):02d}/{rnd.randint(1900, 2099)}",
        lambda: f"{rnd.randint(1, 28):02d}.{rnd.randint(1, 12):02d}.{rnd.randint(1900, 2099)}",
        lambda: f"{rnd.randint(1900, 2099)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}T{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:00Z",
        lambda: f"{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}",
        lambda: f"ISBN 978-{rnd.randint(0, 9)}-{d(3)}-{d(5)}-{rnd.randint(0, 9)}",      # ISBNs
        lambda: f"ISBN {rnd.randint(0, 9)}-{d(3)}-{d(5)}-{rnd.randint(0, 9)}",
        lambda: f"978{d(10)}",
        lambda: hexs(40), lambda: hexs(7), lambda: hexs(64),                              # hashes
        lambda: f"{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}",
        lambda: f"{rnd.uniform(-90, 90):.4f}, {rnd.uniform(-180, 180):.4f}",             # coordinates
        lambda: f"{rnd.randint(0, 89)}°{rnd.randint(0, 59)}′{rnd.randint(0, 59)}″N",
        lambda: f"{rnd.randint(1, 9999)} + {rnd.randint(1, 9999)} = {rnd.randint(1, 20000)}",  # arithmetic
        lambda: f"{rnd.randint(100, 999)} * {rnd.randint(100, 999)} = {rnd.randint(10000, 998001)}",
        lambda: f"{rnd.randint(1000, 9999)}-{rnd.randint(1000, 9999)}",
        lambda: f"{rnd.randint(1, 999)},{rnd.randint(100, 999)},{rnd.randint(100, 999)}",
        lambda: f"${rnd.randint(1, 999)},{rnd.randint(100, 999)}.{rnd.randint(10, 99)}",
        lambda: _random_ip(rnd, False),                                                    # private IPs
        lambda: rnd.choice(["127.0.0.1", "192.168.1.1", "10.0.0.1", "172.16.4.20", "::1", "fe80::1",
                            "2001:db8::1", "198.51.100.7", "203.0.113.9", "169.254.1.1"]),
        lambda: ":".join(f"{rnd.randint(0, 255):02X}" for _ in range(6)),                  # MAC address
        lambda: bad_card(rnd), lambda: iban(rnd, valid=False),
        lambda: f"localhost:{rnd.randint(1024, 65535)}", lambda: "std::vector<int>", lambda: "a::b::c",
        lambda: f"user@localhost", lambda: f"{d(5)}", lambda: f"{d(6)}", lambda: f"+{rnd.randint(1, 9)}",
        lambda: f"{rnd.randint(1, 100)}%", lambda: f"1{d(12)}", lambda: f"0.{d(6)}",
    ])()


GENERATORS = {"email": email, "phone": phone, "ip": ip, "card": card, "iban": iban}


def paragraphs() -> list[str]:
    """Real paragraphs of the sample corpus (every language), cut to at most 600 characters."""
    out = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        text = json.loads(line)["text"]
        out += [p[:600] for p in text.split("\n\n") if len(p) > 80 and "@" not in p][:4]
    return out


def labelled_documents(seed: int = 19, count: int = 1500) -> list[tuple[str, list[tuple[str, int, int]]]]:
    """`count` documents, each with the (kind, start, end) of every PII inserted into it."""
    rnd = random.Random(seed)
    base = paragraphs()
    docs = []
    for _ in range(count):
        words = rnd.choice(base).split(" ")
        inserts = []
        for _ in range(rnd.randint(1, 4)):
            at = rnd.randint(0, len(words))
            if rnd.random() < 0.35:
                inserts.append((at, None, negative(rnd), None))
            else:
                kind = rnd.choice(sorted(GENERATORS) + ["credentials"])
                if kind == "credentials":
                    url, part = credentials(rnd)
                    inserts.append((at, kind, url, part))
                else:
                    value = GENERATORS[kind](rnd)
                    inserts.append((at, kind, value, value))
        text, labels, pos = "", [], 0
        for i, w in enumerate(words + [None]):
            for at, kind, value, part in [x for x in inserts if x[0] == i]:
                text += ("" if not text else " ") + value + " "
                if kind is not None:
                    s = len(text) - 1 - len(value) + value.index(part)
                    labels.append((kind, s, s + len(part)))
            if w is not None:
                text += w + (" " if i < len(words) - 1 else "")
        docs.append((text, labels))
    return docs
