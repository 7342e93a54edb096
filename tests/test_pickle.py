"""Tokenizers of every family pickle as their source (a file path with its content's digest, a spec
or a model), small and quick, and the copies, here and in spawned worker processes, give the same
ids."""
from __future__ import annotations

import gzip
import json
import multiprocessing
import operator
import pickle
import shutil
from pathlib import Path

import duckdb
import pytest

import sqltok
from sqltok import BPETokenizer, Tokenizer
from sqltok.bpe.tiktoken_file import read_tiktoken
from sqltok.errors import SqltokError

CORPUS = Path(__file__).parent / "data" / "corpora_sample.jsonl"
TEXTS = [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()][::8] + \
    ["", "hello <|endoftext|> world", "Grüße, 世界! 🙂"]


@pytest.fixture(scope="module")
def tokenizers(bundled, golden_dir, tmp_path_factory):
    """One tokenizer of every way sqltok builds one, by a label."""
    folder = tmp_path_factory.mktemp("pickle")
    reference = folder / "bpe_en_v8192.model"
    reference.write_bytes(gzip.decompress((golden_dir / "bpe_en_v8192.model.gz").read_bytes()))
    bert_json = bundled("bert-base-uncased_tokenizer.json")
    vocab_txt = folder / "vocab.txt"
    vocab_txt.write_text("\n".join(Tokenizer.load(bert_json).spec.tokens) + "\n", encoding="utf-8")
    bundled("gpt2_merges.txt")  # beside the vocab.json
    con = duckdb.connect()
    sqltok.import_model(con, reference, "stored")
    boundless = folder / "boundless_en_v8192.model"
    boundless.write_bytes(gzip.decompress((golden_dir / "boundless_en_v8192.model.gz").read_bytes()))
    sqltok.import_model(con, boundless, "superword")
    toks = {
        "tiktoken file": Tokenizer.load(bundled("r50k_base.tiktoken")),
        "vocab.json + merges.txt": Tokenizer.load(bundled("gpt2_vocab.json")),
        "reference .model file": Tokenizer.load(reference),
        "model in a database": BPETokenizer.from_db(con, "stored"),
        "superword model in a database": BPETokenizer.from_db(con, "superword"),
        "spec": BPETokenizer.from_spec(read_tiktoken(bundled("r50k_base.tiktoken")), "r50k spec"),
        "WordPiece tokenizer.json": Tokenizer.load(bert_json),
        "WordPiece vocab.txt": sqltok.WordPieceTokenizer.load(vocab_txt, lowercase=False),
    }
    con.close()
    return toks


def test_every_family_pickles_to_the_same_ids(tokenizers):
    for label, tok in tokenizers.items():
        data = pickle.dumps(tok)
        copy = pickle.loads(data)
        assert type(copy) is type(tok) and copy.name == tok.name, label
        assert copy.encode_ordinary_batch(TEXTS) == tok.encode_ordinary_batch(TEXTS), label
        assert copy.encode_batch(TEXTS, allowed_special="all") == tok.encode_batch(TEXTS, allowed_special="all")
        assert copy.special_tokens == tok.special_tokens, label
        if label.endswith("file") or label.startswith("vocab.json"):
            assert len(data) < 1000, label  # the path and a digest, not the vocabulary


def test_copies_in_spawned_workers_give_the_same_ids(tokenizers):
    """As DataLoader and multiprocessing workers get them: pickled to a fresh interpreter."""
    chosen = [tokenizers[k] for k in ("tiktoken file", "model in a database", "WordPiece tokenizer.json")]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.map(operator.methodcaller("encode_ordinary_batch", TEXTS), chosen)
    assert got == [tok.encode_ordinary_batch(TEXTS) for tok in chosen]


def test_a_changed_file_is_refused(bundled, tmp_path):
    path = tmp_path / "r50k_base.tiktoken"
    shutil.copy(bundled("r50k_base.tiktoken"), path)
    data = pickle.dumps(Tokenizer.load(path))
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last token gone
    with pytest.raises(SqltokError, match="changed since"):
        pickle.loads(data)


def test_a_tokenizer_without_a_source_says_so(tokenizers):
    tok = tokenizers["tiktoken file"]
    bare = BPETokenizer(tok.name, tok._encoder, tok.special_tokens, tok.pattern)
    with pytest.raises(TypeError, match="does not know its source"):
        pickle.dumps(bare)
