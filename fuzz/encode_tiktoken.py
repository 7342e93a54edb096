"""Fuzz the byte-level BPE encoder on o200k_base and cl100k_base against tiktoken: `encode_ordinary`,
`encode(allowed_special="all")`, the disallowed-special error, `token_count` and the decode round trip.
Text keeps the characters tiktoken's Unicode tables know (`known_to_peers`).

    python fuzz/encode_tiktoken.py [libFuzzer args]
"""
import atheris
import tiktoken
import tiktoken.load

from fuzz_support import bundled, fuzzed_text, known_to_peers, main

from sqltok import BPETokenizer
from sqltok.bpe.tiktoken_file import read_tiktoken


def pair(name: str) -> tuple[BPETokenizer, tiktoken.Encoding]:
    path = bundled(f"{name}.tiktoken")
    spec = read_tiktoken(path)
    ref = tiktoken.Encoding(spec.name, pat_str=spec.pattern, special_tokens=spec.special_tokens,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)))
    return BPETokenizer.load(path), ref


PAIRS = [pair("o200k_base"), pair("cl100k_base")]
FRAGMENTS = sorted({s for tok, _ in PAIRS for s in tok.special_tokens}) + [
    "<|", "|>", "'s", "'LL", " the", "\n\n", "  ", "1234567", "\u00e9", "日本語", "🙂👍🏽", "\ufffd",
    "QUJDREVGR0hJ", "ab" * 40, " " * 30]


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    tok, ref = PAIRS[fdp.ConsumeIntInRange(0, len(PAIRS) - 1)]
    text = fuzzed_text(fdp, FRAGMENTS, keep=known_to_peers)
    ids = tok.encode_ordinary(text)
    assert ids == ref.encode_ordinary(text), (tok.name, text)
    assert tok.token_count(text) == len(ids), (tok.name, text)
    assert tok.decode(ids) == text, (tok.name, text)
    special = tok.encode(text, allowed_special="all")
    assert special == ref.encode(text, allowed_special="all"), (tok.name, text)
    assert tok.decode(special) == text, (tok.name, text)
    try:
        expected = ref.encode(text)
    except ValueError:
        expected = ValueError
    try:
        got = tok.encode(text)
    except ValueError:
        got = ValueError
    assert got == expected, (tok.name, text)


if __name__ == "__main__":
    main(test_one)
