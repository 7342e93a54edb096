"""The pretokens that the threads of a call share (`sqltok/native/shared_pieces.h`): what one thread
merged, another takes from the shared table instead of merging it again; the ids must be those of
one thread, and those of tiktoken and the reference, whatever the table holds or lacks."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqltok import BPETokenizer
from sqltok.bpe.reference_file import loads

from conftest import tiktoken_pair

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"


def sample_texts() -> list[str]:
    """The bundled sample (13 languages and code), each text cut into lines: short rows, so that a
    call spreads them over its threads."""
    rows = [json.loads(line)["text"] for line in SAMPLE.open(encoding="utf-8")]
    return [line for text in rows for line in text.split("\n") if line]


def fresh_workspace_call(tok: BPETokenizer, texts: list[str]) -> list[list[int]]:
    """Ids of `texts` through a call whose third thread's workspace is new: its pretoken cache is
    empty, so each pretoken that needs merging is looked up in the shared table that the first call's
    two threads filled (their two workspaces are the ones the encoder kept)."""
    arr = pa.array(texts, pa.large_string())
    tok.encode_arrow(arr, threads=2)
    return tok.encode_arrow(arr, threads=3).to_pylist()


@pytest.fixture(scope="module")
def o200k(bundled):
    return tiktoken_pair(bundled("o200k_base.tiktoken"))


def test_ids_taken_from_the_shared_table_equal_tiktoken(o200k):
    tok, ref = o200k
    texts = sample_texts()
    assert fresh_workspace_call(tok, texts) == ref.encode_ordinary_batch(texts)


def test_long_pretokens_taken_from_the_shared_table_equal_tiktoken(o200k, bundled):
    """Pretokens of 25 to 48 bytes (merged in lanes, not held by the word-keyed cache) and over 48
    (backtracked, looked up and shared one at a time)."""
    tok, ref = tiktoken_pair(bundled("o200k_base.tiktoken"))
    rng = __import__("random").Random(7)
    words = ["".join(rng.choice("ぁあぃいぅうぇえぉおかがきぎくぐけげこごさざ日本語中文字") for _ in range(rng.randint(9, 40)))
             for _ in range(300)]
    texts = [" ".join(rng.choice(words) for _ in range(6)) for _ in range(600)]
    assert fresh_workspace_call(tok, texts) == ref.encode_ordinary_batch(texts)


@pytest.mark.parametrize("slot_bits, arena_bytes", [(4, 4096), (8, 64), (6, 0)])
def test_a_full_or_absent_shared_table_changes_no_id(bundled, slot_bits, arena_bytes):
    """A table of 16 or 256 slots, an arena used up after a few entries, and sharing turned off."""
    tok, ref = tiktoken_pair(bundled("o200k_base.tiktoken"))
    tok._encoder.share_merges(slot_bits, arena_bytes)
    texts = sample_texts()
    assert fresh_workspace_call(tok, texts) == ref.encode_ordinary_batch(texts)


def test_the_table_is_sized_before_its_first_use_only(bundled):
    tok, _ = tiktoken_pair(bundled("o200k_base.tiktoken"))
    with pytest.raises(ValueError, match="slot_bits"):
        tok._encoder.share_merges(40, 1 << 20)
    with pytest.raises(ValueError, match="arena_bytes"):
        tok._encoder.share_merges(10, -1)
    tok.encode_arrow(pa.array(sample_texts(), pa.large_string()), threads=2)
    with pytest.raises(ValueError, match="made already"):
        tok._encoder.share_merges(10, 1 << 20)


@pytest.mark.parametrize("name", ["bpe_en_simple_v2048", "bpe_en_v8192"])
def test_reference_models_through_the_shared_table_equal_their_goldens(golden_dir, name):
    """Reference models merge with a rank guard (no backtracking): their goldens, through the table."""
    tok = BPETokenizer.from_model(loads(gzip.decompress((golden_dir / f"{name}.model.gz").read_bytes()).decode()), name)
    gold = [list(map(int, line.split())) for line in gzip.open(golden_dir / f"{name}.en_valid.ids.gz", "rt")]
    docs = [json.loads(line)["text"] for line in gzip.open(golden_dir / "en_valid.jsonl.gz", "rt", encoding="utf-8")]
    assert fresh_workspace_call(tok, docs) == gold


PIECES = ["the", " the", " Übergröße", " 東京都", "ก็ได้", " naïve", "  ", "\n\n", "1234567", " supercalifragilistic",
          "ÿÿÿ", " αβγδεζηθ", "🙂🙂", "東京都庁第一本庁舎展望室", " x"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join), min_size=130, max_size=400),
       st.integers(2, 3))
def test_any_rows_on_any_threads_equal_one_thread(o200k, texts, threads):
    """Rows made of the same pieces again and again, so that the threads meet each other's merges;
    the encoder (and its table) is the module's, filled by every example before."""
    tok, ref = o200k
    arr = pa.array(texts, pa.large_string())
    assert tok.encode_arrow(arr, threads=threads).to_pylist() == ref.encode_ordinary_batch(texts)


def test_calls_from_several_python_threads_share_one_table(bundled):
    """Three calls at once, two threads each, one encoder: six writers and readers of its table."""
    from concurrent.futures import ThreadPoolExecutor

    tok, ref = tiktoken_pair(bundled("o200k_base.tiktoken"))
    texts = sample_texts()
    parts = [texts[k::3] for k in range(3)] * 2
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda rows: tok.encode_arrow(pa.array(rows, pa.large_string()), threads=2).to_pylist(),
                            parts))
    assert got == [ref.encode_ordinary_batch(rows) for rows in parts]
