"""Setup the harnesses share: this checkout's `sqltok` (when built in place) and the test oracles on
sys.path, the bundled tokenizer files decompressed once, libFuzzer's entry point, and fuzzed text
built from raw Unicode, chosen fragments and long runs (so short inputs reach special tokens,
contractions and fast paths)."""
from __future__ import annotations

import lzma
import os
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))  # tests/oracle_pretokenize.py
if any((ROOT / "sqltok" / "pretokenizer").glob("_pretokenize.*.so")):  # built in place: this checkout's
    sys.path.insert(0, str(ROOT))  # sqltok, else the installed one (CI tests the sdist's install)

with atheris.instrument_imports(include=["sqltok", "oracle_pretokenize"]):
    import oracle_pretokenize  # noqa: F401  (imported here so that their Python code is instrumented:
    import sqltok  # noqa: F401  libFuzzer's coverage feedback; the Cython extensions are not)

CACHE = Path(os.environ.get("SQLTOK_FUZZ_CACHE", Path(tempfile.gettempdir()) / "sqltok-fuzz"))


def bundled(name: str) -> Path:
    """tests/data/tokenizers/<name>.xz, decompressed into the cache folder (once)."""
    path = CACHE / name
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(lzma.decompress((TESTS / "data" / "tokenizers" / f"{name}.xz").read_bytes()))
        tmp.replace(path)
    return path


def known_to_peers(c: str) -> bool:
    """Whether the peers' Unicode tables (older than sqltok's 17.0) know character `c` as sqltok does:
    those Python's `unicodedata` has assigned (a character assigned since is a letter to sqltok and
    unassigned to tiktoken's and HF's regular expressions)."""
    return unicodedata.category(c) != "Cn"


@atheris.instrument_func
def fuzzed_text(fdp: atheris.FuzzedDataProvider, fragments: Sequence[str] = (), max_parts: int = 12,
                keep: Callable[[str], bool] | None = None) -> str:
    """Text of up to `max_parts` parts, each raw Unicode (no surrogates), one of `fragments` or a run
    of one character; `keep` drops characters an oracle cannot judge."""
    parts = []
    for _ in range(fdp.ConsumeIntInRange(0, max_parts)):
        kind = fdp.ConsumeIntInRange(0, 3)
        if kind == 0 or (kind == 1 and not fragments):
            parts.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 40)))
        elif kind == 1:
            parts.append(fragments[fdp.ConsumeIntInRange(0, len(fragments) - 1)])
        elif kind == 2:
            parts.append(fdp.ConsumeUnicodeNoSurrogates(1) * fdp.ConsumeIntInRange(0, 300))
        else:
            parts.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 8)).lower())
    text = "".join(parts)
    return "".join(c for c in text if keep(c)) if keep else text


def main(test_one: Callable[[bytes], None]) -> None:
    """Run libFuzzer on `test_one` (instrumented) with the command line's arguments."""
    atheris.Setup(sys.argv, atheris.instrument_func(test_one))
    atheris.Fuzz()
