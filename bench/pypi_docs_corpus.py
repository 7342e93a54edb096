"""English text that none of sqltok's code was tuned on: the documentation of the PyPI packages
installed in this Python (each distribution's long description, its README, and the docstrings of its
modules, classes and functions), none of it from the Debian packages `en100.parquet` was built from.

    python bench/pypi_docs_corpus.py OUT.parquet [--mb 20] [--seed 0]

Cut and filtered as `build_corpus.py` does (paragraphs seen once, documents of 200 to 12,000
characters that read as English prose), shuffled with the seed, written as Parquet (`doc_id, text`).
sqltok itself is left out. Prints how many documents and MB each distribution gave; the output is the
same for the same installed packages and seed.
"""
from __future__ import annotations

import argparse
import ast
import sys
from importlib.metadata import distributions
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_corpus import clean, documents, sample, write  # noqa: E402

LEFT_OUT = {"sqltok"}


def docstrings(source: str) -> list[str]:
    """The docstrings of a module and of its classes and functions, in file order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                out.append(doc)
    return out


def distribution_texts(dist) -> list[str]:
    """A distribution's long description and the docstrings of its Python files."""
    texts = [dist.metadata.get_payload() or dist.metadata.get("Description") or ""]
    for f in dist.files or []:
        if f.suffix == ".py":
            try:
                texts += docstrings(Path(dist.locate_file(f)).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                continue
    return texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output Parquet file")
    ap.add_argument("--mb", type=float, default=20, help="corpus size in MB of UTF-8 text (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    seen: set[bytes] = set()
    docs: list[tuple[str, str]] = []
    dists = sorted({d.metadata["Name"].lower(): d for d in distributions() if d.metadata["Name"]}.items())
    for name, dist in dists:
        if name in LEFT_OUT:
            continue
        found = [doc for text in distribution_texts(dist) for doc in documents(clean(text), seen)]
        docs += [(name, d) for d in found]
        if found:
            print(f"{name} {dist.version}: {len(found)} documents, "
                  f"{sum(len(d.encode()) for d in found) / 1e6:.2f} MB", file=sys.stderr)
    total = sum(len(d.encode()) for _, d in docs) / 1e6
    print(f"{len(docs)} documents, {total:.2f} MB available", file=sys.stderr)
    chosen = sample(docs, min(args.mb, total), args.seed)
    write(args.out, chosen)
    print(f"wrote {len(chosen)} documents, {sum(len(d.encode()) for _, d in chosen) / 1e6:.2f} MB to {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
