"""A text longer than the encoder's `segment_bytes` is encoded a segment at a time, each cut at a cut
point of its pattern (with supermerges: of the candidates), so that its work vectors stay a segment's
size: the ids must be the whole text's. Oracles: tiktoken on multi-megabyte texts, and the same
encoder with segments too long to cut anything."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sqltok import BPETokenizer
from sqltok.bpe.reference_file import loads
from conftest import tiktoken_pair

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def _sample_text() -> str:
    with SAMPLE.open(encoding="utf-8") as f:
        return "\n\n".join(json.loads(line)["text"] for line in f)


def _whole(tok: BPETokenizer, text: str) -> list[int]:
    """The ids with segments longer than the text (nothing cut)."""
    encoder = tok._encoder
    saved, encoder.segment_bytes = encoder.segment_bytes, 1 << 40
    try:
        return tok.encode_ordinary(text)
    finally:
        encoder.segment_bytes = saved


@pytest.mark.parametrize("name", ["o200k_base.tiktoken", "cl100k_base.tiktoken", "r50k_base.tiktoken"])
def test_a_long_text_has_tiktokens_ids(bundled, name):
    """Three copies of every fixture language joined (several segments of the default size), and the
    sample with segments of 64 bytes (thousands of cuts), in every entry point."""
    tok, ref = tiktoken_pair(bundled(name))
    sample = _sample_text()
    big = "\n\n".join([sample] * (1 + (3 << 20) // len(sample.encode())))
    want = ref.encode_ordinary(big)
    assert tok.encode_ordinary(big) == want
    assert tok.token_count(big) == len(want)
    assert tok.encode_arrow(pa.array([big, "x"]), threads=2).to_pylist() == [want, ref.encode_ordinary("x")]
    tok._encoder.segment_bytes = 64
    assert tok.encode_ordinary(sample) == ref.encode_ordinary(sample)
    assert tok.encode(sample + "<|endoftext|>" + sample, allowed_special="all") == \
        ref.encode(sample + "<|endoftext|>" + sample, allowed_special="all")


def _golden(golden_dir, name: str) -> BPETokenizer:
    return BPETokenizer.from_model(loads(gzip.decompress((golden_dir / f"{name}.model.gz").read_bytes()).decode()), name)


PIECES = ["a", "b", "Z", " ", "  ", "\n", "\n\n", " \n", "\t", "1", "23", ".", "!?", "'s", "the", " cat", "中", "文",
          "日本", " \u0301", "é", "Ω", "д", "😀", "\r\n", "--"]


@pytest.mark.parametrize("name", ["bpe_multi_v4096", "boundless_multi_v4096", "super_en_v8192"])
@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=80).map("".join), size=st.integers(1, 24))
@example(text="ab\nc d\ne", size=1)
def test_segments_of_any_size_give_the_whole_texts_ids(golden_dir, name, text, size):
    """Script-aware and two-phase models (whose segments end only where no supermerge candidate
    crosses: after a line feed before a letter)."""
    tok = _golden(golden_dir, name)
    want = _whole(tok, text)
    tok._encoder.segment_bytes = size
    assert tok.encode_ordinary(text) == want


@pytest.mark.parametrize("name", ["bpe_multi_v4096", "boundless_multi_v4096"])
def test_golden_texts_in_small_segments(golden_dir, name):
    tok = _golden(golden_dir, name)
    texts = [json.loads(line)["text"] for line in gzip.open(golden_dir / "multi_valid.jsonl.gz", "rt", encoding="utf-8")]
    want = [_whole(tok, t) for t in texts]
    tok._encoder.segment_bytes = 100
    assert tok.encode_ordinary_batch(texts) == want
