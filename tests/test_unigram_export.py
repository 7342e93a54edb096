"""A trained Unigram model through the CLI: `sqltok train --method unigram` then `sqltok export
--format sentencepiece` gives spm_train's model; `--format hf` a tokenizer.json `tokenizers` loads with
the oracle's ids; the lattice breaks ties between equal paths as SentencePiece does."""
import io
import json

import pyarrow as pa
import sentencepiece as spm
from tokenizers import Tokenizer

from sqltok.cli import main
from sqltok.unigram._lattice import WordLattices
from sqltok.unigram.model_proto import model_proto, read_pieces
from sqltok.unigram.spec import CONTROL, NORMAL, UNKNOWN, UnigramSpec

from test_unigram_train import CORPORA, _lines


def test_cli_train_and_export_give_the_oracle_model(tmp_path):
    lines = _lines(CORPORA / "fr.jsonl", 1500)
    corpus, held = tmp_path / "fr.txt", lines[800:]
    corpus.write_text("\n".join(lines[:800]) + "\n", encoding="utf-8")
    db = str(tmp_path / "t.duckdb")
    assert main(["train", str(corpus), "--lines", "--method", "unigram", "--vocab-size", "900", "--model", "fr",
                 "--byte-fallback", "--user-defined-symbols", "<x>", "--db", db]) == 0
    assert main(["export", "fr", "--format", "sentencepiece", "-o", str(tmp_path / "fr.model"), "--db", db]) == 0
    assert main(["export", "fr", "--format", "hf", "-o", str(tmp_path / "fr.json"), "--db", db]) == 0
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_writer=out, model_type="unigram", vocab_size=900,
                                   num_threads=1, minloglevel=2, byte_fallback=True, user_defined_symbols=["<x>"])
    oracle = spm.SentencePieceProcessor(model_proto=out.getvalue())
    ours = spm.SentencePieceProcessor(model_file=str(tmp_path / "fr.model"))
    assert [p for p, _, _ in read_pieces(ours.serialized_model_proto())] == \
        [p for p, _, _ in read_pieces(oracle.serialized_model_proto())]
    hf = Tokenizer.from_file(str(tmp_path / "fr.json"))
    texts = held + ["  Ça  <x> va ?  ", "🙂 日本語 ﬁ①"]
    assert [hf.encode(t).ids for t in texts] == [oracle.encode(t) for t in texts]
    assert [hf.decode(oracle.encode(t)) for t in held[:50]] == [oracle.decode(oracle.encode(t)) for t in held[:50]]


def test_equal_paths_go_as_in_sentencepiece():
    """'ab' scores as 'a' + 'b': SentencePiece's Viterbi keeps the first best node it sees."""
    pieces = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL), ("a", -1.0, NORMAL),
              ("b", -1.0, NORMAL), ("ab", -2.0, NORMAL), ("▁", -0.5, NORMAL)]
    oracle = spm.SentencePieceProcessor(model_proto=model_proto(pieces, UnigramSpec(vocab_size=7), b"", []))
    words = ["▁ab", "▁abab", "▁ba"]
    normal = pa.array([p for p, _, t in pieces if t == NORMAL], pa.large_string())
    scores = [s for _, s, t in pieces if t == NORMAL]
    for w in words:
        counts = WordLattices(normal, scores, pa.array([w], pa.large_string()), pa.array([1], pa.int64())) \
            .viterbi_counts(scores)
        expected = [0] * len(normal)
        for piece in oracle.encode(w.replace("▁", " ").strip(), out_type=str):
            expected[normal.to_pylist().index(piece)] += 1
        assert counts.tolist() == expected, w


def test_whitespace_as_suffix_exports_to_hf_with_the_oracle_ids(tmp_path):
    """The dummy "▁" goes at the end of the text (Replace(\\z -> ▁), no Metaspace); sqltok reads the
    export back with HF's ids and offsets."""
    import sqltok

    lines = _lines(CORPORA / "fr.jsonl", 1000)
    corpus, held = tmp_path / "fr.txt", lines[700:] + ["  Ça  va ?  ", " ", "x", "🙂 ﬁ①"]
    corpus.write_text("\n".join(lines[:700]) + "\n", encoding="utf-8")
    db = str(tmp_path / "t.duckdb")
    assert main(["train", str(corpus), "--lines", "--method", "unigram", "--vocab-size", "700", "--model", "fr",
                 "--treat-whitespace-as-suffix", "--db", db]) == 0
    assert main(["export", "fr", "--format", "sentencepiece", "-o", str(tmp_path / "fr.model"), "--db", db]) == 0
    assert main(["export", "fr", "--format", "hf", "-o", str(tmp_path / "fr.json"), "--db", db]) == 0
    oracle = spm.SentencePieceProcessor(model_file=str(tmp_path / "fr.model"))
    hf = Tokenizer.from_file(str(tmp_path / "fr.json"))
    assert [hf.encode(t).ids for t in held] == [oracle.encode(t) for t in held]
    ours = sqltok.Tokenizer.load(str(tmp_path / "fr.json"))
    for t in held:
        e = hf.encode(t)
        assert tuple(ours.encode_with_offsets(t, allowed_special="all")) == (e.ids, [tuple(o) for o in e.offsets])
