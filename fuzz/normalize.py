"""Fuzz the normalizers: NFC, NFD, NFKC and NFKD against `unicodedata2` (Unicode 17.0) on any text,
and `bert_normalize` under every switch against HF's BertNormalizer on text of characters Python's
`unicodedata` has assigned (HF's Unicode tables are older).

    python fuzz/normalize.py [libFuzzer args]
"""
import itertools
import unicodedata

import atheris
import pyarrow as pa
import unicodedata2
from tokenizers import normalizers

from fuzz_support import fuzzed_text, main

import sqltok

FORMS = ["NFC", "NFD", "NFKC", "NFKD"]
SWITCHES = [dict(zip(["clean_text", "handle_chinese_chars", "strip_accents", "lowercase"], values))
            for values in itertools.product([True, False], [True, False], [None, True, False], [True, False])]
HF_BERT = [normalizers.BertNormalizer(**s) for s in SWITCHES]
FRAGMENTS = ["e\u0301", "\u0301\u0316\u0345", "\u1100\u1161\u11a8", "\uac00", "\ufb01", "\u2460", "\u212b",
             "\u0f73", "\u1d15e", "\u0958", "A\u030a", "\u1e9b\u0323", "\u3000", "\x00", "\t\r\n", "中",
             "İ", "ΣΟΦΙΑ", "ß", "\u00a0", "\u200b", "\ufffd"]


def assigned(c: str) -> bool:
    return unicodedata.category(c) != "Cn"


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    texts = [fuzzed_text(fdp, FRAGMENTS, max_parts=8) for _ in range(fdp.ConsumeIntInRange(1, 3))]
    arr = pa.array(texts, pa.large_string())
    for form in FORMS:
        expected = [unicodedata2.normalize(form, t) for t in texts]
        assert sqltok.normalize(texts, form) == expected, (texts, form)
        assert sqltok.normalize(arr, form).to_pylist() == expected, (texts, form)
    old = ["".join(c for c in t if assigned(c)) for t in texts]
    k = fdp.ConsumeIntInRange(0, len(SWITCHES) - 1)
    assert sqltok.bert_normalize(old, **SWITCHES[k]) == [HF_BERT[k].normalize_str(t) for t in old], \
        (old, SWITCHES[k])


if __name__ == "__main__":
    main(test_one)
