"""Fuzz the pretokenizer against the `regex` oracles of the tests: o200k (script-aware and simple,
tests/oracle_pretokenize.py) and every other pattern of `PATTERN_IDS` (`regex.findall` of its string,
`$` read as the end of the text), through `pretokenize` and `pretokenize_arrow`.

    python fuzz/pretokenize.py [libFuzzer args, e.g. -max_total_time=60]
"""
import atheris
import pyarrow as pa
import regex

from fuzz_support import fuzzed_text, main

import oracle_pretokenize as oracle
from sqltok.pretokenizer._pretokenize import PATTERNS, pretokenize, pretokenize_arrow

ORACLES = [(pid, regex.compile(pat.replace("$", r"\Z"))) for pat, pid in PATTERNS.items() if pid > 1]
FRAGMENTS = ["'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'m", "'t", "\u017f", "\u212a", " ", "  ", "\n",
             "\r\n", "\t", "/", "123", "12345", "\u0301", "\u00a0", "\u3000", "漢字", "カタカナ", "ภาษา",
             "a" * 70, "Hello", " world", "HTTP", "ǅ", "ʰ", "🙂", "\U000e0001", "\u0378", "\x00"]


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fuzzed_text(fdp, FRAGMENTS)
    expected = {True: oracle.pretokenize(text, True), False: oracle.pretokenize(text, False)}
    for aware, pieces in expected.items():
        assert pretokenize(text, aware) == pieces, (text, aware)
    for pid, compiled in ORACLES:
        assert pretokenize(text, pattern=pid) == compiled.findall(text), (text, pid)
    rows = pa.array([text, None, text[::-1]], pa.string())
    for aware in (True, False):
        got = pretokenize_arrow(rows, aware).to_pylist()
        assert got == [expected[aware], None, oracle.pretokenize(text[::-1], aware)], (text, aware)


if __name__ == "__main__":
    main(test_one)
