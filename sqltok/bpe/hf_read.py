"""Read a Hugging Face `tokenizers` byte-level BPE (tokenizer.json, or GPT-2's vocab.json + merges.txt)
as an `EncoderSpec`.

Supported: model BPE with the vocabulary in GPT-2 byte-to-unicode form; merges as "a b" strings or
[a, b] lists; `ignore_merges` (Llama 3); normalizer null or NFC (Qwen); pre-tokenizer ByteLevel with
its own GPT-2 regex, or Sequence[Split(Regex, Isolated) or Split(Regex, Removed, invert), ByteLevel
without regex] (cl100k/o200k conversions, Llama 3, Qwen); post-processor null, ByteLevel (it only
moves offsets) or RobertaProcessing (RoBERTa, BART: it adds <s> and </s> with HF's
add_special_tokens=True, which sqltok's encode is not); added tokens, special or not, with their flags (lstrip, rstrip, single_word,
normalized: `sqltok.added_tokens`).

Anything else raises `UnsupportedTokenizerError` naming each feature, rather than loading a
tokenizer that would encode differently from HF. HF's own rules that the spec follows:

- rank = index in `merges`; a pair listed twice keeps the later rank (HF builds a map keyed by the
  pair, the later entry replacing the earlier).
- result = the vocabulary id of a + b. A merge whose a, b or a + b is missing from the vocabulary
  makes HF refuse the file (tokenizers 0.23.3 even panics on a missing result), so it is a
  ModelFormatError here too.
- a byte whose char is not in the vocabulary is dropped by HF when there is no unk token
  (`byte_ids` -1); with an unk token it would become unk, which is refused.
- added tokens get the ids HF gives them, not the "id" written in the file (see `_added_tokens`).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from sqltok.added_tokens import AddedTokenFlags, read_added_tokens
from sqltok.errors import SqltokError
from sqltok.bpe.byte_unicode import bytes_to_unicode_str, unicode_str_to_bytes
from sqltok.bpe.encoder_spec import EncoderSpec, id_count
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.formats.files import read_utf8
from sqltok.formats.json_file import load_json
from sqltok.normalizers import normalize
from sqltok.pretokenizer import patterns


def read_hf(path: str | os.PathLike, name: str | None = None, document: object = None) -> EncoderSpec:
    """The `EncoderSpec` of a tokenizer.json (`document`: its parsed JSON, when read already); `name`
    defaults to the folder name for a file called tokenizer.json, else the file name without its
    extension."""
    path = Path(path)
    doc = load_json(path) if document is None else document
    if name is None:
        name = path.parent.name if path.name == "tokenizer.json" and path.parent.name else path.stem
    try:
        return spec_from_hf_json(doc, name)
    except ModelFormatError as e:
        raise type(e)(f"{path}: {e}") from None


def spec_from_hf_json(doc: object, name: str) -> EncoderSpec:
    """The `EncoderSpec` of a parsed tokenizer.json."""
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise ModelFormatError("not a tokenizer.json: expected a JSON object with a 'model' object")
    model = doc["model"]
    model_type = model.get("type", "BPE" if "merges" in model else None)
    if model_type == "WordPiece":
        raise UnsupportedTokenizerError("tokenizer.json model type WordPiece is not byte-level BPE: "
                                        "Tokenizer.load reads it as a WordPieceTokenizer")
    if model_type != "BPE":
        raise UnsupportedTokenizerError(
            f"tokenizer.json model type {model_type} is not supported yet (byte-level BPE only)")

    problems = _model_problems(model)
    normalizer = _normalizer(doc.get("normalizer"), problems)
    pattern, keep_unmatched = _pre_tokenizer(doc.get("pre_tokenizer"), problems)
    _post_processor(doc.get("post_processor"), problems)
    for key in ("truncation", "padding"):
        if doc.get(key) is not None:
            problems.append(f"{key} is set (sqltok encodes whole texts, without {key})")
    vocab = _vocab(model.get("vocab"))
    special, added, flags = _added_tokens(doc.get("added_tokens") or [], vocab, problems)
    if normalizer is not None:
        problems += [f"added token {t!r} with normalized false and a text that {normalizer} changes (HF matches "
                     f"it in the raw text, sqltok in the {normalizer} text)" for t in [*special, *added]
                     if not flags.get(t, AddedTokenFlags()).normalized and normalize(t, normalizer) != t]
    if problems:
        raise UnsupportedTokenizerError(
            "tokenizer.json uses what sqltok's byte-level BPE encoder does not support yet: "
            + "; ".join(problems))

    pairs = _pairs(model.get("merges"), vocab)
    spec = _spec(name, vocab, pairs, special, added, direct=bool(model.get("ignore_merges", False)),
                 pattern=pattern, keep_unmatched=keep_unmatched, normalizer=normalizer, flags=flags)
    if -1 in spec.byte_ids and model.get("unk_token") is not None:
        missing = ", ".join(f"0x{b:02X}" for b, i in enumerate(spec.byte_ids) if i == -1)
        raise UnsupportedTokenizerError(
            f"bytes {missing} have no token and model.unk_token is set (HF would output the unk "
            "token for them); not supported yet")
    return spec


def read_hf_vocab_merges(vocab_path: str | os.PathLike, merges_path: str | os.PathLike,
                         special_tokens: dict[str, int] | None = None, pattern: str = patterns.GPT2,
                         name: str | None = None) -> EncoderSpec:
    """The `EncoderSpec` of GPT-2's original files (vocab.json + merges.txt), as HF's
    `BPE.from_file(vocab, merges)` behind `ByteLevel(add_prefix_space=False)` encodes: the GPT-2
    pattern (Isolated), no added tokens unless `special_tokens` names some (GPT-2's
    "<|endoftext|>" is an ordinary vocabulary entry, id 50256). merges.txt: lines starting with
    "#version" are skipped, every other line is "a b" (HF refuses anything else)."""
    vocab_path, merges_path = Path(vocab_path), Path(merges_path)
    vocab_doc = load_json(vocab_path)
    text = read_utf8(merges_path)
    merges, line_numbers = [], []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if line.startswith("#version") or (line == "" and number == text.count("\n") + 1):
            continue  # the header, and the "line" after the final newline
        if len(line.split(" ")) != 2:
            raise ModelFormatError(
                f"{merges_path}: line {number}: expected a merge 'left right'")
        merges.append(line)
        line_numbers.append(number)
    if name is None:
        name = vocab_path.parent.name or vocab_path.stem
    try:
        vocab = _vocab(vocab_doc)
    except ModelFormatError as e:
        raise ModelFormatError(f"{vocab_path}: {e}") from None
    try:
        pairs = _pairs(merges, vocab, lambda rank: f"line {line_numbers[rank]}: merge {rank}")
    except ModelFormatError as e:
        raise ModelFormatError(f"{merges_path}: {e}") from None
    special = dict(special_tokens or {})
    for text, i in special.items():
        if not isinstance(text, str) or not text or not isinstance(i, int) or i < 0:
            raise SqltokError(f"special token {text!r}: {i!r} is not an id (an integer >= 0)")
    return _spec(name, vocab, pairs, special, {}, direct=False, pattern=pattern, keep_unmatched=True,
                 normalizer=None)


# ----------------------------------------------------------------------------- checks


def _model_problems(model: dict) -> list[str]:
    problems = []
    if model.get("dropout") not in (None, 0, 0.0):
        problems.append(f"model.dropout {model['dropout']} (BPE dropout merges at random)")
    if model.get("byte_fallback"):
        problems.append("model.byte_fallback true (SentencePiece-style <0x..> byte tokens)")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            problems.append(f"model.{key} {model[key]!r} (byte-level BPE has none)")
    return problems


def _normalizer(normalizer: object, problems: list[str]) -> str | None:
    """None or "NFC"; anything else is a problem."""
    if normalizer is None:
        return None
    steps = [normalizer]
    if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence":
        steps = normalizer.get("normalizers") or []
    types = [s.get("type") if isinstance(s, dict) else s for s in steps]
    if types == []:
        return None
    if types == ["NFC"]:
        return "NFC"
    problems.append(f"normalizer {_describe(normalizer)} (only none or NFC)")
    return None


def _pre_tokenizer(pre: object, problems: list[str]) -> tuple[str, bool]:
    """(pattern, keep_unmatched); a problem for anything but the supported forms."""
    steps = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    steps = steps if isinstance(steps, list) else [steps]
    types = [s.get("type") if isinstance(s, dict) else None for s in steps]
    if types == ["ByteLevel"]:
        byte_level = steps[0]
        if not byte_level.get("use_regex", True):
            problems.append("pre_tokenizer ByteLevel with use_regex false and no Split before it "
                            "(the whole text would be one pretoken)")
        _byte_level_prefix(byte_level, problems)
        return patterns.GPT2, True
    if types == ["Split", "ByteLevel"]:
        split, byte_level = steps
        if byte_level.get("use_regex", True):
            problems.append(
                "pre_tokenizer Split followed by ByteLevel with use_regex true (two regex splits)")
        _byte_level_prefix(byte_level, problems)
        pattern = split.get("pattern")
        if not (isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str)):
            problems.append(f"pre_tokenizer Split with pattern {_describe(pattern)} (only a Regex pattern)")
            return "", False
        behavior, invert = split.get("behavior"), bool(split.get("invert", False))
        if (behavior, invert) == ("Isolated", False):
            return pattern["Regex"], True
        if (behavior, invert) == ("Removed", True):
            return pattern["Regex"], False
        problems.append(f"pre_tokenizer Split with behavior {behavior} and invert {str(invert).lower()} "
                        "(only Isolated, or Removed with invert true)")
        return "", False
    problems.append(f"pre_tokenizer {_describe(pre)} (only ByteLevel, or Split(Regex) then ByteLevel)")
    return "", False


def _byte_level_prefix(byte_level: dict, problems: list[str]) -> None:
    if byte_level.get("add_prefix_space", True):
        problems.append(
            "pre_tokenizer ByteLevel add_prefix_space true (HF puts a space before each stretch of "
            "text that does not start with one: each text between added tokens, or each Split piece)")


def _post_processor(post: object, problems: list[str]) -> None:
    steps = post.get("processors") if isinstance(post, dict) and post.get("type") == "Sequence" else [post]
    for step in steps if isinstance(steps, list) else [steps]:
        if step is None or (isinstance(step, dict) and step.get("type") in ("ByteLevel", "RobertaProcessing")):
            continue  # ByteLevel only trims offsets; RobertaProcessing adds <s>, </s> only with
            # add_special_tokens=True, and sqltok's encode is HF's add_special_tokens=False
        added = ""
        if isinstance(step, dict) and isinstance(step.get("single"), list):
            ids = [piece["SpecialToken"].get("id") for piece in step["single"]
                   if isinstance(piece, dict) and isinstance(piece.get("SpecialToken"), dict)]
            added = f" adds {' '.join(map(str, ids))} around the text" if ids else ""
        problems.append(f"post_processor {_describe(step)}{added} (only none, ByteLevel or RobertaProcessing)")


def _added_tokens(entries: object, vocab: dict[str, int], problems: list[str]
                  ) -> tuple[dict[str, int], dict[str, int], dict[str, AddedTokenFlags]]:
    """(special tokens, non-special added tokens, the flags of those that have any) by content, with
    the ids HF gives them (`read_added_tokens`); a token whose text HF's ByteLevel decoder changes
    is a problem."""
    special, added, flags = read_added_tokens(entries, vocab)
    for content in [*special, *added]:
        if _byte_level_text(content) != content.encode():
            problems.append(f"added token {content!r}, whose text HF's ByteLevel decoder turns into other bytes "
                            f"({_byte_level_text(content)!r}: its characters stand for bytes in GPT-2's "
                            "byte-to-unicode form)")
    return special, added, flags


def _byte_level_text(content: str) -> bytes:
    """The bytes HF's ByteLevel decoder gives an added token: those its characters stand for when
    all are in GPT-2's byte-to-unicode form, else its UTF-8."""
    try:
        return unicode_str_to_bytes(content)
    except ValueError:
        return content.encode()


# ----------------------------------------------------------------------------- vocabulary and merges


def _vocab(vocab: object) -> dict[str, int]:
    if not isinstance(vocab, dict):
        raise ModelFormatError(
            f"the vocabulary must be a JSON object token -> id, got {type(vocab).__name__}")
    owner: dict[int, int] = {}
    for n, i in enumerate(vocab.values()):
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise ModelFormatError(f"vocabulary entry {n}: its id is not an integer >= 0")
        if i in owner:
            raise ModelFormatError(f"vocabulary entries {owner[i]} and {n} have the same id {i}")
        owner[i] = n
    return vocab


def _pairs(merges: object, vocab: dict[str, int],
           label: Callable[[int], str] = lambda rank: f"merge {rank}") -> list[tuple[int, int, int, int]]:
    """(left_id, right_id, rank, result_id) by rank; a pair listed twice keeps its later rank, as HF.
    `label(rank)` names a merge in error messages."""
    if not isinstance(merges, list):
        raise ModelFormatError(f"merges must be a list, got {type(merges).__name__}")
    table: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, merge in enumerate(merges):
        if isinstance(merge, str):
            parts = merge.split(" ")
        elif isinstance(merge, list) and all(isinstance(p, str) for p in merge):
            parts = merge
        else:
            parts = []
        if len(parts) != 2:
            raise ModelFormatError(f"{label(rank)}: expected 'left right' or [left, right]")
        a, b = parts
        for token in (a, b, a + b):
            if token not in vocab:
                raise ModelFormatError(f"{label(rank)} ({a!r}, {b!r}): {token!r} is not in the vocabulary "
                                       "(HF refuses such a file too)")
        table[vocab[a], vocab[b]] = (rank, vocab[a + b])
    return sorted(((left, right, rank, result) for (left, right), (rank, result) in table.items()),
                  key=lambda p: p[2])


def _spec(name: str, vocab: dict[str, int], pairs: list[tuple[int, int, int, int]],
          special: dict[str, int], added: dict[str, int], *, direct: bool, pattern: str,
          keep_unmatched: bool, normalizer: str | None,
          flags: dict[str, AddedTokenFlags] | None = None) -> EncoderSpec:
    n = id_count({*vocab.values(), *special.values(), *added.values()})
    tokens: list[bytes | None] = [None] * n
    for token, i in vocab.items():
        try:
            tokens[i] = unicode_str_to_bytes(token)
        except ValueError:
            pass  # not in byte-to-unicode form (e.g. an added token kept in the vocab): never produced
    # A merge of tokens outside the byte-to-unicode form can never apply to byte-level text.
    pairs = [p for p in pairs if tokens[p[0]] is not None and tokens[p[1]] is not None]
    byte_ids = [vocab.get(bytes_to_unicode_str(bytes([b])), -1) for b in range(256)]
    return EncoderSpec(name=name, tokens=tokens, pairs=pairs, byte_ids=byte_ids, direct=direct,
                       pattern=pattern, special_tokens=special, normalizer=normalizer, source="hf",
                       added_tokens=added, keep_unmatched=keep_unmatched, added_flags=flags or {})


def _describe(value: object) -> str:
    """A short name for a tokenizer.json component: its type, Sequence[...] for sequences."""
    if value is None:
        return "null"
    if not isinstance(value, dict):
        return repr(value)[:60]
    kind = value.get("type")
    if kind == "Sequence":
        inner = next((value[k] for k in ("pretokenizers", "normalizers", "processors", "decoders")
                      if isinstance(value.get(k), list)), [])
        return "Sequence[" + ", ".join(_describe(v) for v in inner) + "]"
    if kind is None:
        return repr(value)[:60]
    return str(kind)
