"""Read Mistral's Tekken tokenizers (`tekken_*.json`, shipped in mistral-common) as an `EncoderSpec`.

A Tekken file is tiktoken-style byte-level BPE in JSON: `config` (the pre-tokenization `pattern`,
`default_vocab_size`, `default_num_special_tokens`), `vocab` (one {rank, token_bytes (base64),
token_str} per rank, ranks 0..255 the single bytes) and, in newer files, `special_tokens` ({rank,
token_str}). As mistral-common's `Tekkenizer` builds it: the special tokens take ids
0..num_special-1 (a file without them has Tekken's twenty original ones, then `<SPECIAL_n>` up to
num_special), the vocabulary is cut to its first `default_vocab_size - num_special` ranks, and a
token's id is its rank + num_special.
"""
from __future__ import annotations

import base64
import binascii
from pathlib import Path

from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.bpe.tiktoken_file import spec_from_ranks
from sqltok.formats.errors import ModelFormatError

#: The special tokens of Tekken files that do not list theirs (mistral-common's deprecated defaults).
ORIGINAL_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)


def _int(config: dict, key: str, path: Path) -> int:
    value = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ModelFormatError(f"{path}: config.{key} must be an integer >= 0, not {value!r}")
    return value


def read_tekken(path: Path, document: dict, name: str) -> EncoderSpec:
    """The `EncoderSpec` of a parsed Tekken file (ids as mistral-common's `Tekkenizer.encode`)."""
    config = document["config"]
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ModelFormatError(f"{path}: config.pattern must be a non-empty string")
    n_special = _int(config, "default_num_special_tokens", path)
    vocab_size = _int(config, "default_vocab_size", path)
    vocab = document["vocab"]
    inner = vocab_size - n_special
    if not 256 <= inner <= len(vocab):
        raise ModelFormatError(f"{path}: default_vocab_size {vocab_size} minus {n_special} special tokens "
                               f"does not fit the {len(vocab)} tokens of the vocabulary (256 at least)")
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(vocab[:inner]):
        if not isinstance(entry, dict) or entry.get("rank") != i or not isinstance(entry.get("token_bytes"), str):
            raise ModelFormatError(f"{path}: vocab[{i}] must be {{rank: {i}, token_bytes: base64, ...}}")
        try:
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except binascii.Error as e:
            raise ModelFormatError(f"{path}: vocab[{i}].token_bytes is not valid base64 ({e})") from None
        if token in ranks:
            raise ModelFormatError(f"{path}: vocab[{i}] repeats the token of vocab[{ranks[token] - n_special}]")
        ranks[token] = i + n_special
    listed = document.get("special_tokens")
    if listed is None:
        names = list(ORIGINAL_SPECIAL_TOKENS[:n_special])
    else:
        if not isinstance(listed, list) or not all(isinstance(t, dict) and isinstance(t.get("token_str"), str)
                                                   and t.get("rank") == k for k, t in enumerate(listed)):
            raise ModelFormatError(f"{path}: special_tokens must be a list of {{rank, token_str}} in rank order")
        names = [t["token_str"] for t in listed]
    if len(names) > n_special or len(set(names)) != len(names):
        raise ModelFormatError(f"{path}: {len(names)} special tokens (distinct?) for {n_special} special ids")
    names += [f"<SPECIAL_{i}>" for i in range(len(names), n_special)]
    return spec_from_ranks(ranks, pattern, {s: i for i, s in enumerate(names)}, name)
