"""Build an English benchmark corpus (Parquet: doc_id BIGINT, text VARCHAR) from Debian packages.

Usage: python bench/build_corpus.py OUT.parquet [--mb 100] [--no-install] [--seed 0]

Installs the documentation, dictionary and book packages in PACKAGES with apt-get
(unless --no-install), extracts English text from the files matching each package's
patterns, cuts it at paragraph boundaries into documents of at most MAX_CHARS
characters, shuffles them with the seed and keeps documents until --mb MB
(10**6 bytes of UTF-8) are reached. The output depends only on the installed
package versions (printed in the summary) and the seed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import random
import re
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterable
from fnmatch import fnmatch
from html.parser import HTMLParser

import pyarrow as pa
import pyarrow.parquet as pq

# Debian (bookworm) package -> glob patterns (on the installed path) of the files to read.
# The patterns pick one format per document where a package ships several (HTML, text, sources).
PACKAGES: dict[str, tuple[str, ...]] = {
    "dict-gcide": ("*.dict.dz",),
    "dict-wn": ("*.dict.dz",),
    "dict-foldoc": ("*.dict.dz",),
    "dict-jargon": ("*.dict.dz",),
    "dict-devil": ("*.dict.dz",),
    "fortunes-min": ("/usr/share/games/fortunes/*",),
    "fortunes": ("/usr/share/games/fortunes/*",),
    "sword-text-kjv": ("*.bzz",),
    "sword-text-web": ("*.bzz",),
    "linux-doc-6.1": ("*/Documentation/*.rst.gz", "*/Documentation/*.txt.gz"),
    "python3.11-doc": ("/usr/share/doc/python3.11/html/*.html",),
    "python-django-doc": ("*.html",),
    "postgresql-doc-15": ("*.html",),
    "sqlite3-doc": ("*.html",),
    "git-doc": ("*.txt",),
    "perl-doc": ("*.pod",),
    "vim-runtime": ("/usr/share/vim/vim*/doc/*.txt",),
    "bash-doc": ("*/bashref.html",),
    "zsh-doc": ("*.html",),
    "cmake-doc": ("*/_sources/*.txt",),
    "sphinx-doc": ("*/_sources/*.txt",),
    "autoconf-doc": ("*/autoconf.html",),
    "gnu-standards": ("*.text.gz",),
    "debian-handbook": ("*/en-US/*.html",),
    "debian-reference-en": ("*.txt.gz",),
    "debian-policy": ("/usr/share/doc/debian-policy/*.txt.gz",),
    "debian-faq": ("*.en.txt.gz",),
    "developers-reference": ("*.txt.gz",),
    "maint-guide": ("*.txt.gz",),
}

MAX_CHARS = 12_000  # longest document, in characters
MIN_CHARS = 200  # shorter documents are dropped
ROW_GROUP = 8192

# Translated documentation: language directories (/de/, /zh_CN/), suffixes (x.fr.html), translations/.
_LANGS = "ar|bg|ca|cs|da|de|el|es|fa|fi|fr|he|hu|id|it|ja|ko|nb|nl|pl|pt|ro|ru|sk|sl|sv|tr|uk|vi|zh"
FOREIGN_PATH = re.compile(rf"/translations?/|/(?:{_LANGS})(?:_[A-Z]{{2}})?/|\.(?:{_LANGS})(?:_[A-Z]{{2}})?\.")
STOPWORDS = frozenset(
    "the of and to a in is that for it as with was on be by this are or not from at an which but"
    " have has had can you all if will they their we he his she her its no so do may must one".split()
)
MIN_STOPWORD_RATIO = 0.12  # English prose is ~0.35-0.5; code, tables, indexes, other languages are far lower
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
SKIP_TAGS = {"head", "script", "style", "nav", "noscript", "template", "svg", "note"}  # note: OSIS footnotes
BLOCK_TAGS = {
    "p", "div", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "li", "dt", "dd", "ul", "ol", "dl",
    "table", "tr", "blockquote", "section", "article", "header", "footer", "hr", "title", "chapter",
}


class _HTMLText(HTMLParser):
    """Collects the visible text of an HTML (or OSIS) document, with paragraph breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_tag: str | None = None
        self.skip_depth = 0
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip_tag:
            self.skip_depth += tag == self.skip_tag
        elif tag not in VOID_TAGS and (tag in SKIP_TAGS or dict(attrs).get("role") in ("navigation", "search")):
            self.skip_tag, self.skip_depth = tag, 1
        elif tag == "br":
            self.parts.append("\n")
        elif tag in BLOCK_TAGS:
            self.pre += tag == "pre"
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if self.skip_tag:
            self.skip_depth -= tag == self.skip_tag
            if not self.skip_depth:
                self.skip_tag = None
        elif tag in BLOCK_TAGS:
            self.pre = max(0, self.pre - (tag == "pre"))
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.skip_tag:
            return
        if not self.pre:
            data = re.sub(r"\s+", " ", data)
            if not self.parts or self.parts[-1].endswith("\n"):
                data = data.lstrip()
        self.parts.append(data)


def html_to_text(markup: str) -> str:
    """Visible text of HTML/OSIS markup, blocks separated by blank lines."""
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    return "".join(parser.parts).replace("\u00b6", "")  # drop Sphinx's pilcrow anchors


def sword_markup(path: str) -> bytes:
    """Decompressed OSIS text of a SWORD zText .bzz file (blocks listed in the sibling .bzs)."""
    with open(path, "rb") as f:
        data = f.read()
    with open(path[:-1] + "s", "rb") as f:
        index = f.read()
    return b"".join(
        zlib.decompress(data[offset : offset + size])
        for offset, size, _ in struct.iter_unpack("<III", index)
        if size
    )


def decode(raw: bytes) -> str | None:
    """UTF-8 text of raw bytes; None for binary or non-UTF-8 data (a few stray bytes are dropped)."""
    if b"\0" in raw[:8192]:
        return None
    text = raw.decode("utf-8", "replace")
    if text.count("\ufffd") > len(text) // 100_000:
        return None
    return text.replace("\ufffd", "")


def read_text(path: str) -> str | None:
    """Plain text of one installed file, or None if it is not usable text."""
    if path.endswith(".bzz"):
        text = decode(sword_markup(path))
        return text and html_to_text(text)
    with open(path, "rb") as f:
        raw = f.read()
    name = path
    if path.endswith((".gz", ".dz")):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            return None
        name = path[:-3]
    text = decode(raw)
    if text and name.endswith((".html", ".htm")):
        text = html_to_text(text)
    return text


def clean(text: str) -> str:
    """Normalise newlines and whitespace; lone '%' lines (fortune separators) become blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
    text = re.sub(r"[ \t]+$", "", text, flags=re.M)
    text = re.sub(r"^%$", "", text, flags=re.M)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def pack(parts: Iterable[str], sep: str) -> list[str]:
    """Greedily join consecutive parts with sep into strings of at most MAX_CHARS characters."""
    out: list[str] = []
    current: list[str] = []
    size = -len(sep)
    for part in parts:
        if current and size + len(sep) + len(part) > MAX_CHARS:
            out.append(sep.join(current))
            current, size = [], -len(sep)
        current.append(part)
        size += len(sep) + len(part)
    if current:
        out.append(sep.join(current))
    return out


def pieces(paragraph: str) -> list[str]:
    """Split a paragraph longer than MAX_CHARS into chunks at line breaks (or spaces, for long lines)."""
    if len(paragraph) <= MAX_CHARS:
        return [paragraph]
    lines: list[str] = []
    for line in paragraph.split("\n"):
        while len(line) > MAX_CHARS:
            cut = line.rfind(" ", 0, MAX_CHARS)
            cut = cut if cut > 0 else MAX_CHARS
            lines.append(line[:cut])
            line = line[cut:].lstrip()
        lines.append(line)
    return pack(lines, "\n")


def documents(text: str, seen: set[bytes]) -> list[str]:
    """Cut text at paragraph boundaries into English documents of MIN_CHARS to MAX_CHARS characters.

    Paragraphs already in `seen` (whitespace-normalised) are dropped, which removes
    navigation boilerplate and text repeated across files.
    """
    fresh = []
    for paragraph in text.split("\n\n"):
        key = hashlib.blake2b(" ".join(paragraph.split()).encode(), digest_size=12).digest()
        if key not in seen:
            seen.add(key)
            fresh.append(paragraph)
    docs = pack((piece for paragraph in fresh for piece in pieces(paragraph)), "\n\n")
    return [doc for doc in docs if len(doc) >= MIN_CHARS and is_english(doc)]


def is_english(text: str) -> bool:
    """Cheap test for English prose: enough common English function words."""
    words = re.findall(r"\w+", text.lower())
    return bool(words) and sum(w in STOPWORDS for w in words) >= MIN_STOPWORD_RATIO * len(words)


def apt(*args: str) -> None:
    """Run apt-get non-interactively."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "-q", *args], check=True, env=env)


def install(packages: list[str]) -> None:
    """apt-get update, then install the packages that this Debian release has."""
    apt("update")
    available = [
        p for p in packages
        if subprocess.run(["apt-cache", "show", p], capture_output=True).returncode == 0
    ]
    for p in sorted(set(packages) - set(available)):
        print(f"warning: package {p} is not available, skipped", file=sys.stderr)
    apt("install", "-y", "--no-install-recommends", *available)


def versions(packages: list[str]) -> dict[str, str]:
    """Installed version of each package (missing ones are left out)."""
    result = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev} ${Version}\n", *packages],
        capture_output=True, text=True,
    )
    rows = (line.split() for line in result.stdout.splitlines())
    return {row[0]: row[2] for row in rows if len(row) == 3 and row[1] == "ii"}


def package_files(package: str, patterns: tuple[str, ...]) -> list[str]:
    """Installed regular files (no symlinks) of a package that match its patterns, sorted."""
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True)
    return sorted(
        path for path in listing.stdout.splitlines()
        if any(fnmatch(path, p) for p in patterns)
        and not FOREIGN_PATH.search(path)
        and os.path.isfile(path) and not os.path.islink(path)
    )


def collect(packages: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """(package, document) pairs from all installed packages, in a deterministic order."""
    seen: set[bytes] = set()
    docs: list[tuple[str, str]] = []
    for package, patterns in packages.items():
        count = 0
        for path in package_files(package, patterns):
            text = read_text(path)
            if text:
                new = documents(clean(text), seen)
                docs += ((package, doc) for doc in new)
                count += len(new)
        print(f"  {package}: {count} documents", file=sys.stderr)
    return docs


def sample(docs: list[tuple[str, str]], mb: float, seed: int) -> list[tuple[str, str]]:
    """Shuffle with the seed and keep documents until mb * 10**6 UTF-8 bytes are reached."""
    docs = docs[:]
    random.Random(seed).shuffle(docs)
    target, total = mb * 1_000_000, 0
    for n, (_, doc) in enumerate(docs):
        if total >= target:
            return docs[:n]
        total += len(doc.encode())
    sys.exit(f"error: only {total:,} bytes of text available, {target:,.0f} requested")


def write(path: str, docs: list[tuple[str, str]]) -> None:
    """Write the documents as Parquet (doc_id BIGINT, text VARCHAR), zstd, ROW_GROUP rows per group."""
    table = pa.table(
        {"doc_id": pa.array(range(len(docs)), pa.int64()), "text": pa.array([d for _, d in docs], pa.string())}
    )
    pq.write_table(table, path, compression="zstd", row_group_size=ROW_GROUP)


def summarize(available: list[tuple[str, str]], chosen: list[tuple[str, str]], installed: dict[str, str]) -> None:
    """Print document and byte counts, overall and per package."""
    avail_bytes: Counter[str] = Counter()
    for package, doc in available:
        avail_bytes[package] += len(doc.encode())
    docs: Counter[str] = Counter(package for package, _ in chosen)
    nbytes: Counter[str] = Counter()
    for package, doc in chosen:
        nbytes[package] += len(doc.encode())
    total = sum(nbytes.values())
    print(f"documents: {len(chosen):,}  bytes: {total:,}  (of {sum(avail_bytes.values()):,} available)")
    print(f"{'package':<22} {'version':<28} {'docs':>7} {'bytes':>12} {'share':>6} {'available':>12}")
    for package, version in sorted(installed.items(), key=lambda kv: -nbytes[kv[0]]):
        print(
            f"{package:<22} {version:<28} {docs[package]:>7,} {nbytes[package]:>12,} "
            f"{nbytes[package] / max(total, 1):>6.1%} {avail_bytes[package]:>12,}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="output Parquet file")
    parser.add_argument("--mb", type=float, default=100, help="corpus size in MB of UTF-8 text (default 100)")
    parser.add_argument("--no-install", action="store_true", help="use the packages already installed")
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    args = parser.parse_args()

    start = time.perf_counter()
    if not args.no_install:
        install(list(PACKAGES))
    installed = versions(list(PACKAGES))
    for package in sorted(set(PACKAGES) - set(installed)):
        print(f"warning: package {package} is not installed, skipped", file=sys.stderr)
    available = collect({p: pats for p, pats in PACKAGES.items() if p in installed})
    chosen = sample(available, args.mb, args.seed)
    write(args.out, chosen)
    summarize(available, chosen, installed)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
