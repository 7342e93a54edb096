"""Fuzz every model reader with mutated real files: `sqltok.Tokenizer.load` of a `.tiktoken` file, a
tokenizer.json (WordPiece and BPE), a vocab.txt, a reference `.model`, a GPT-2 vocab.json +
merges.txt pair and a SentencePiece `.model` (Mistral's, cut short, as BPE and as Unigram) must load, or raise a `sqltok.SqltokError`; any other exception, a crash or a hang is
a finding. A loaded tokenizer must also encode and decode a sample text.

An input is one byte choosing the file's layout (its name, and the companion written beside it),
then the file's bytes. The seeds, small cuts of the bundled files, are written to the corpus folder (the
first folder given, else CACHE/readers-corpus).

    python fuzz/readers.py [corpus folder] [libFuzzer args, e.g. -max_total_time=60]
"""
import dataclasses
import gzip
import json
import sys
import tempfile
from pathlib import Path

import atheris
import tokenizers

from fuzz_support import CACHE, TESTS, bundled, main

import sqltok
from sqltok.bpe.model import Merge, Model
from sqltok.bpe.reference_file import dumps, loads
from sqltok.sentencepiece.model_proto import ModelType, read_model_proto
from sqltok.sentencepiece.model_write import write_model_proto

SAMPLE = "Hello world, it's 123 déjà vu 日本語 🙂\n\n  [UNK] <|endoftext|>"
VOCAB_JSON = "vocab.json"
MERGES_TXT = "merges.txt"


def lines(name: str, n: int) -> bytes:
    """The first `n` lines of a bundled file."""
    return b"".join(bundled(name).read_bytes().splitlines(keepends=True)[:n])


def gpt2_pair(n_merges: int) -> tuple[bytes, bytes]:
    """GPT-2's vocab.json and merges.txt cut to the bytes and the first `n_merges` merges."""
    vocab = json.loads(bundled("gpt2_vocab.json").read_bytes())
    small = {t: i for t, i in vocab.items() if i < 256 + n_merges}
    return json.dumps(small).encode(), lines("gpt2_merges.txt", n_merges + 1)


def small_reference(n_merges: int) -> bytes:
    """The golden bpe_en_simple_v2048 `.model` cut to its byte tokens and first `n_merges` merges."""
    model: Model = loads(gzip.decompress((TESTS / "data" / "golden" / "bpe_en_simple_v2048.model.gz")
                                         .read_bytes()).decode())
    merges = model.merges[:n_merges]
    keep = [i for i, t in enumerate(model.tokens) if len(t) == 1] + model.new_ids(merges)
    new_id = {old: i for i, old in enumerate(keep)}
    small = dataclasses.replace(
        model, tokens=[model.tokens[i] for i in keep], token_counts=[model.token_counts[i] for i in keep],
        is_super=[model.is_super[i] for i in keep],
        merges=[Merge(new_id[m.left], new_id[m.right], m.count, m.flag) for m in merges],
        special_tokens={s: len(keep) + k for k, s in enumerate(model.special_tokens)})
    return dumps(small).encode()


def small_wordpiece(n: int) -> tuple[bytes, bytes]:
    """bert-base-uncased's tokenizer.json and its vocab.txt, cut to the first `n` tokens."""
    doc = json.loads(bundled("bert-base-uncased_tokenizer.json").read_bytes())
    vocab = {t: i for t, i in doc["model"]["vocab"].items() if i < n}
    doc["model"]["vocab"] = vocab
    return json.dumps(doc).encode(), "".join(f"{t}\n" for t in sorted(vocab, key=vocab.get)).encode()


def small_hf_bpe(vocab_json: bytes, merges_txt: bytes) -> bytes:
    """An HF ByteLevel BPE tokenizer.json of the cut GPT-2 pair, written by `tokenizers`."""
    merges = [tuple(line.split(" ")) for line in merges_txt.decode().splitlines()[1:]]
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(json.loads(vocab_json), merges))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    return tok.to_str().encode()


def small_sentencepiece(n: int, model_type: ModelType) -> bytes:
    """Mistral's tokenizer.model.v1 cut to its first `n` pieces (the byte pieces among them)."""
    model = read_model_proto(bundled("mistral_tokenizer.model.v1").read_bytes(), "tokenizer.model.v1")
    return write_model_proto(dataclasses.replace(
        model, pieces=model.pieces[:n], scores=model.scores[:n], types=model.types[:n],
        trainer=dataclasses.replace(model.trainer, model_type=model_type, vocab_size=n)))


VOCAB, MERGES = gpt2_pair(200)
BERT_JSON, BERT_VOCAB_TXT = small_wordpiece(1100)
# Layouts: (the fuzzed file's name, (companion name, companion bytes) or None).
LAYOUTS = [("model.tiktoken", None), ("tokenizer.json", None), ("vocab.txt", None), ("ref.model", None),
           (VOCAB_JSON, (MERGES_TXT, MERGES)), (MERGES_TXT, (VOCAB_JSON, VOCAB)), ("tokenizer.model.v1", None)]
SEEDS = {"tiktoken": (0, lines("r50k_base.tiktoken", 300)), "wordpiece_json": (1, BERT_JSON),
         "bpe_json": (1, small_hf_bpe(VOCAB, MERGES)), "vocab_txt": (2, BERT_VOCAB_TXT),
         "reference": (3, small_reference(120)), "gpt2_vocab": (4, VOCAB), "gpt2_merges": (5, MERGES),
         "sentencepiece_bpe": (6, small_sentencepiece(600, ModelType.BPE)),
         "sentencepiece_unigram": (6, small_sentencepiece(600, ModelType.UNIGRAM))}
WORK = Path(tempfile.mkdtemp(prefix="sqltok-fuzz-readers-"))


def test_one(data: bytes) -> None:
    if not data:
        return
    name, companion = LAYOUTS[data[0] % len(LAYOUTS)]
    for stale in WORK.iterdir():
        stale.unlink()
    path = WORK / name
    path.write_bytes(data[1:])
    if companion:
        (WORK / companion[0]).write_bytes(companion[1])
    try:
        tok = sqltok.Tokenizer.load(path)
        tok.decode(tok.encode_ordinary(SAMPLE))
    except sqltok.SqltokError:
        pass


def write_seeds(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (layout, content) in SEEDS.items():
        (folder / f"seed_{name}").write_bytes(bytes([layout]) + content)


if __name__ == "__main__":
    folders = [a for a in sys.argv[1:] if not a.startswith("-")]
    if not folders:
        folders = [str(CACHE / "readers-corpus")]
        sys.argv.append(folders[0])
    write_seeds(Path(folders[0]))
    main(test_one)
