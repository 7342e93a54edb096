"""Fuzz the WordPiece encoder on bert-base-uncased's tokenizer.json against HF `tokenizers`: ids with
[CLS]/[SEP] and special tokens, token counts (which count [CLS] and [SEP]), and HF's decode of the same ids. Text keeps characters
Python's `unicodedata` (older than Unicode 17, like HF's tables) has assigned.

    python fuzz/encode_wordpiece.py [libFuzzer args]
"""

import atheris
import pyarrow as pa
import tokenizers

from fuzz_support import bundled, fuzzed_text, known_to_peers, main

from sqltok import Tokenizer

PATH = bundled("bert-base-uncased_tokenizer.json")
TOK = Tokenizer.load(PATH)
HF = tokenizers.Tokenizer.from_file(str(PATH))
HF.no_truncation()
HF.no_padding()
FRAGMENTS = sorted(TOK.special_tokens) + ["##", "##ing", " un", "aff", "able", "é", "e\u0301", "中文", "ﬁ",
                                          "İ", "\u00a0", "\x00", "\u200b", "\ufffd", "a" * 101, "don't", ",."]


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    texts = [fuzzed_text(fdp, FRAGMENTS, max_parts=6, keep=known_to_peers) for _ in range(fdp.ConsumeIntInRange(1, 3))]
    ours = TOK.encode_arrow(pa.array(texts, pa.large_string()), allowed_special="all").to_pylist()
    theirs = [e.ids for e in HF.encode_batch(texts)]
    assert ours == theirs, texts
    assert TOK.decode_arrow(pa.array(theirs)).to_pylist() == HF.decode_batch(theirs), texts
    for text, ids in zip(texts, theirs):  # token_count reads special-token text as text, HF does not
        assert any(s in text for s in TOK.special_tokens) or TOK.token_count(text) == len(ids), text


if __name__ == "__main__":
    main(test_one)
