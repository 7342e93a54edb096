"""Read tiktoken's `.tiktoken` files ("<base64 token> <rank>" per line) as an `EncoderSpec`.

A `.tiktoken` file holds only the mergeable tokens: the pre-tokenization pattern and the special
tokens live in code (tiktoken's `tiktoken_ext/openai_public.py`, openai-whisper's
`whisper/tokenizer.py`). Like tiktoken, `read_tiktoken` recognizes the standard files by the sha256
of their bytes and supplies those; for any other file the caller must give the pattern.

The id of a token is its rank, and tiktoken merges the adjacent pair whose concatenation has the
lowest rank, so `pairs` holds every split of every token into two tokens (see `EncoderSpec`).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from sqltok.errors import SqltokError
from sqltok.pretokenizer import patterns
from sqltok.bpe._concatenations import concatenation_pairs
from sqltok.bpe.encoder_spec import EncoderSpec, id_count
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.formats.files import read_bytes

# ----------------------------------------------------------------------------- the known files


ENDOFTEXT = "<|endoftext|>"
ENDOFPROMPT = "<|endofprompt|>"

#: Whisper's language codes in the order of its language tokens (openai-whisper's `LANGUAGES`);
#: the models up to large-v2 use the first 99, large-v3 all 100 ("yue" was added last).
WHISPER_LANGUAGES: tuple[str, ...] = (
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it",
    "id", "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur",
    "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn",
    "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si",
    "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo",
    "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha",
    "ba", "jw", "su", "yue",
)


def whisper_special_tokens(first_id: int, num_languages: int = 99) -> dict[str, int]:
    """Whisper's special tokens as openai-whisper's `get_encoding` builds them, ids from `first_id`
    (the number of ranks in the file): <|endoftext|>, <|startoftranscript|>, one per language,
    the six task/control tokens, then the 1501 timestamps <|0.00|> .. <|30.00|>."""
    if not 0 < num_languages <= len(WHISPER_LANGUAGES):
        raise SqltokError(f"num_languages must be 1..{len(WHISPER_LANGUAGES)}, got {num_languages}")
    names = [
        "<|endoftext|>",
        "<|startoftranscript|>",
        *[f"<|{code}|>" for code in WHISPER_LANGUAGES[:num_languages]],
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nospeech|>",
        "<|notimestamps|>",
        *[f"<|{i * 0.02:.2f}|>" for i in range(1501)],
    ]
    return {text: first_id + i for i, text in enumerate(names)}


@dataclass(frozen=True)
class KnownTiktokenFile:
    """A standard `.tiktoken` file: its encoding name, pattern and special tokens."""

    name: str
    pattern: str
    special_tokens: dict[str, int]


#: sha256 of the file bytes -> what the file is. The first four hashes are the `expected_hash`es of
#: tiktoken's registry (tiktoken_ext/openai_public.py); r50k_base.tiktoken is byte for byte
#: openai-whisper's English-only `gpt2.tiktoken`, and p50k_edit uses p50k_base.tiktoken with three
#: more special tokens: a file read alone is taken as r50k_base / p50k_base.
KNOWN_TIKTOKEN_FILES: dict[str, KnownTiktokenFile] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930":
        KnownTiktokenFile("r50k_base", patterns.R50K, {ENDOFTEXT: 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069":
        KnownTiktokenFile("p50k_base", patterns.R50K, {ENDOFTEXT: 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7":
        KnownTiktokenFile("cl100k_base", patterns.CL100K, {
            ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, ENDOFPROMPT: 100276}),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d":
        KnownTiktokenFile("o200k_base", patterns.O200K, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
    # openai-whisper's assets/multilingual.tiktoken: 50257 ranks, then the 1608 specials of the
    # 99-language models (51865 ids, the n_vocab of tiny..large-v2; large-v3 has 100 languages:
    # pass special_tokens=whisper_special_tokens(50257, 100)).
    "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126":
        KnownTiktokenFile("whisper-multilingual", patterns.GPT2, whisper_special_tokens(50257)),
}


def identify_tiktoken(data: bytes) -> KnownTiktokenFile | None:
    """The standard file whose bytes are `data`, or None."""
    return KNOWN_TIKTOKEN_FILES.get(hashlib.sha256(data).hexdigest())


# ----------------------------------------------------------------------------- reading


def read_tiktoken(path: str | os.PathLike, pattern: str | None = None,
                  special_tokens: dict[str, int] | None = None, name: str | None = None) -> EncoderSpec:
    """The `EncoderSpec` of a `.tiktoken` file.

    A standard file (recognized by its sha256, see `KNOWN_TIKTOKEN_FILES`) gets its pattern, special
    tokens and name; `pattern`, `special_tokens` and `name` given here replace those (special_tokens
    as a whole). Any other file needs `pattern` (tiktoken's `pat_str`); its name defaults to the file
    name without `.tiktoken`. ModelFormatError with the line number for a corrupt line.
    """
    data = read_bytes(path)
    known = identify_tiktoken(data)
    if pattern is None:
        if known is None:
            raise SqltokError(
                f"{path}: not one of the standard tiktoken files, so its pre-tokenization pattern is "
                "not known: pass pattern= (the encoding's pat_str; in SQL sqltok_load(name, path, "
                "pattern)) and special_tokens= if it has any")
        pattern = known.pattern
    if special_tokens is None:
        special_tokens = dict(known.special_tokens) if known else {}
    if name is None:
        name = known.name if known else Path(path).name.removesuffix(".tiktoken")
    try:
        ranks = parse_tiktoken(data)
        return spec_from_ranks(ranks, pattern, special_tokens, name)
    except ModelFormatError as e:
        raise type(e)(f"{path}: {e}") from None


def parse_tiktoken(data: bytes) -> dict[bytes, int]:
    """token bytes -> rank, from the bytes of a `.tiktoken` file.

    Stricter than tiktoken's own `load_tiktoken_bpe` (which lets a later line silently replace an
    earlier one and decodes base64 leniently): ModelFormatError with the line number on a line that
    is not "<base64 token> <rank>", on a token or rank given twice. Blank lines are skipped, as
    tiktoken does. The empty token b"" (Whisper's multilingual.tiktoken has "= 50256") is kept: it
    only reserves its rank, since a piece of text is never empty.
    """
    ranks: dict[bytes, int] = {}
    lines = 0
    for number, line in enumerate(data.split(b"\n"), 1):
        parts = line.split()  # (a trailing "\r" goes with the whitespace)
        if not parts:
            continue
        if len(parts) != 2:
            raise ModelFormatError(f"line {number}: expected '<base64 token> <rank>', found {len(parts)} fields")
        encoded, rank_text = parts
        try:
            # "=" is how Whisper's multilingual.tiktoken writes its empty token (lenient base64).
            token = b"" if encoded == b"=" else base64.b64decode(encoded, validate=True)
        except binascii.Error as e:
            raise ModelFormatError(f"line {number}: the token is not valid base64 ({e})") from None
        if not rank_text.isdigit():
            raise ModelFormatError(f"line {number}: expected a rank (an integer >= 0)")
        ranks[token] = int(rank_text)
        lines += 1
    if len(ranks) != lines or len(set(ranks.values())) != lines:
        _name_the_repeat(data)
    if not ranks:
        raise ModelFormatError("no tokens: the file is empty")
    return ranks


def _name_the_repeat(data: bytes) -> None:
    """ModelFormatError naming the first line whose token or rank an earlier line has (the lines of
    `data` are known to be well formed)."""
    line_of_token: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    for number, line in enumerate(data.split(b"\n"), 1):
        parts = line.split()
        if not parts:
            continue
        token = b"" if parts[0] == b"=" else base64.b64decode(parts[0], validate=True)
        rank = int(parts[1])
        if token in line_of_token:
            raise ModelFormatError(f"line {number}: the token is already on line {line_of_token[token]}")
        if rank in line_of_rank:
            raise ModelFormatError(f"line {number}: the rank is already used on line {line_of_rank[rank]}")
        line_of_token[token] = line_of_rank[rank] = number


def spec_from_ranks(ranks: dict[bytes, int], pattern: str, special_tokens: dict[str, int],
                    name: str) -> EncoderSpec:
    """The `EncoderSpec` of a tiktoken encoding (`mergeable_ranks`, `pat_str`, `special_tokens`)."""
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        shown = ", ".join(f"0x{b:02X}" for b in missing[:8]) + (" ..." if len(missing) > 8 else "")
        raise UnsupportedTokenizerError(
            f"{len(missing)} single bytes have no token ({shown}): sqltok needs a token for each of "
            "the 256 bytes (tiktoken itself fails on text where such a byte stays unmerged)")
    for text, i in special_tokens.items():
        if not isinstance(text, str) or not text or not isinstance(i, int) or i < 0:
            raise SqltokError(f"special token {text!r}: {i!r} is not an id (an integer >= 0)")
    if len(set(special_tokens.values())) != len(special_tokens):
        raise SqltokError("two special tokens have the same id")
    n = id_count({*ranks.values(), *special_tokens.values()})
    tokens: list[bytes | None] = [None] * n
    for token, rank in ranks.items():
        tokens[rank] = token
    for text, i in special_tokens.items():
        if tokens[i] is not None:
            raise SqltokError(f"special token {text!r} has id {i}, the rank of the token {tokens[i]!r}")
    if b"" in ranks:
        tokens[ranks[b""]] = None  # a reserved rank, not a token the encoder can produce
    return EncoderSpec(
        name=name, tokens=tokens, pairs=concatenation_pairs(tokens),
        byte_ids=[ranks[bytes([b])] for b in range(256)], direct=True, pattern=pattern,
        special_tokens=dict(special_tokens), normalizer=None, source="tiktoken", empty_rank=ranks.get(b""))


# ----------------------------------------------------------------------------- writing


def tiktoken_text(spec: EncoderSpec) -> bytes:
    """The `.tiktoken` file of `spec`'s ranks (its empty token written "=", as Whisper's file has it)."""
    return b"".join((b"=" if rank == spec.empty_rank else base64.b64encode(t)) + b" %d\n" % rank
                    for rank, t in enumerate(spec.tokens) if t is not None or rank == spec.empty_rank)


def encoding_document(spec: EncoderSpec) -> bytes:
    """A tiktoken encoding whole, as a database keeps it (kind `tiktoken-encoding`): the JSON of
    tiktoken's `Encoding` arguments, `pat_str`, `special_tokens` and `mergeable_ranks` (the text of
    its `.tiktoken` file)."""
    return json.dumps({"pat_str": spec.pattern, "special_tokens": spec.special_tokens,
                       "mergeable_ranks": tiktoken_text(spec).decode()}).encode()


def read_encoding_document(content: bytes, name: str) -> EncoderSpec:
    """The `EncoderSpec` of an `encoding_document`."""
    doc = json.loads(content)
    return spec_from_ranks(parse_tiktoken(doc["mergeable_ranks"].encode()), doc["pat_str"], doc["special_tokens"], name)
