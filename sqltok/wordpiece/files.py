"""Read a WordPiece (BERT-family) tokenizer: an HF tokenizer.json, or a `vocab.txt` with options
(taken from a `tokenizer_config.json` beside it when there is one).

Supported, as HF `tokenizers` runs them: model WordPiece; normalizer null or BertNormalizer (every
switch; strip_accents null follows lowercase); pre-tokenizer BertPreTokenizer; post-processor null,
TemplateProcessing or BertProcessing; decoder null or WordPiece (prefix, cleanup); added tokens,
special or not, in the vocabulary or after it, with HF's flags (lstrip, rstrip, single_word,
normalized: `sqltok.added_tokens`). `truncation` and `padding` are ignored: sqltok encodes whole
texts. Anything else raises `UnsupportedTokenizerError` naming the feature.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sqltok.added_tokens import AddedTokenFlags, read_added_tokens
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.formats.files import exists, read_utf8
from sqltok.formats.json_file import load_json, strings_by_id
from sqltok.normalizers import bert_normalize
from sqltok.normalizers.bert import bert_switches

#: Unicode's White_Space characters, which Rust's `trim_end` strips off each vocab.txt line as HF reads it
#: (Python's `rstrip()` strips "\x1c".."\x1f" too).
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
              "\u2028\u2029\u202f\u205f\u3000"

#: HF `BertNormalizer` defaults: clean_text, handle_chinese_chars, strip_accents, lowercase.
BERT_DEFAULTS = {"clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True}


@dataclass(frozen=True)
class WordPieceSpec:
    """A WordPiece tokenizer as `WordPieceEncoder` consumes it."""
    name: str
    tokens: list[str]                       # by id: the model's, then the added tokens' after it
    unk_token: str
    prefix: str                             # continuation prefix ("##")
    max_input_chars_per_word: int
    normalizer: tuple[bool, bool, bool, bool] | None   # clean, chinese, strip accents, lowercase
    single: tuple[list[int], list[int]]     # ids before and after a sequence
    pair: tuple[list[int], list[int], list[int]]       # before A, between A and B, after B
    special_tokens: dict[str, int]
    decoder: tuple[str, bool] | None        # WordPiece decoder (prefix, cleanup), None: join with " "
    n_model: int | None = None              # tokens of the model (None: all); the others are added tokens
    added_tokens: dict[str, int] = field(default_factory=dict)   # not special, matched always
    added_flags: dict[str, AddedTokenFlags] = field(default_factory=dict)  # HF's flags that are not the defaults


def read_wordpiece_json(path: str | os.PathLike, name: str | None = None, document: object = None) -> WordPieceSpec:
    """The spec of a WordPiece tokenizer.json (`document`: its parsed JSON, when read already); a
    document of the wrong shape anywhere raises ModelFormatError."""
    path = Path(path)
    doc = load_json(path) if document is None else document
    name = name or (path.parent.name if path.name == "tokenizer.json" and path.parent.name else path.stem)
    try:
        return _spec_from_json(doc, name)
    except ModelFormatError as e:
        raise type(e)(f"{path}: {e}") from None
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:  # a part of the wrong shape
        raise ModelFormatError(f"{path}: not a well-formed WordPiece tokenizer.json (a missing key or a value "
                               f"of the wrong type: {type(e).__name__})") from None


def read_vocab_txt(path: str | os.PathLike, name: str | None = None, **options) -> WordPieceSpec:
    """The spec of a BERT `vocab.txt` (one token a line, id = line number). Options (HF
    BertWordPieceTokenizer's names): clean_text, handle_chinese_chars, strip_accents, lowercase,
    unk_token, cls_token, sep_token, wordpieces_prefix, max_input_chars_per_word; defaults come from
    a tokenizer_config.json beside the file (do_lower_case, strip_accents, tokenize_chinese_chars,
    the special tokens), then from bert-base-uncased's."""
    path = Path(path)
    lines = read_utf8(path).split("\n")  # as HF reads it: lines end at "\n" only (not at "\x85", "\u2028", ...)
    if lines[-1] == "":
        lines.pop()
    tokens = [line.rstrip(WHITE_SPACE) for line in lines]
    config_path = path.parent / "tokenizer_config.json"
    config = load_json(config_path) if exists(config_path) else {}
    if not isinstance(config, dict):
        raise ModelFormatError(f"{config_path}: not a tokenizer_config.json (a JSON object)")
    for key in ("unk_token", "cls_token", "sep_token"):
        value = config.get(key)
        if isinstance(value, dict):  # an AddedToken as transformers writes it: {"__type": "AddedToken", "content": ...}
            value = config[key] = value.get("content")
        if key in config and not isinstance(value, str):
            raise ModelFormatError(f"{config_path}: {key} must be a string or an AddedToken with a content string")
    unknown = set(options) - {"clean_text", "handle_chinese_chars", "strip_accents", "lowercase", "unk_token",
                              "cls_token", "sep_token", "wordpieces_prefix", "max_input_chars_per_word"}
    if unknown:
        raise TypeError(f"unknown WordPiece options: {sorted(unknown)}")
    opt = {"clean_text": True, "handle_chinese_chars": config.get("tokenize_chinese_chars", True),
           "strip_accents": config.get("strip_accents"), "lowercase": config.get("do_lower_case", True),
           "unk_token": config.get("unk_token", "[UNK]"), "cls_token": config.get("cls_token", "[CLS]"),
           "sep_token": config.get("sep_token", "[SEP]"), "wordpieces_prefix": "##",
           "max_input_chars_per_word": 100, **options}
    ids = {t: i for i, t in enumerate(tokens)}  # a token listed twice is its last id, as in HF's vocabulary
    for key in ("unk_token", "cls_token", "sep_token"):
        if opt[key] not in ids:
            raise ModelFormatError(f"{path}: the {key} {opt[key]!r} is not in the vocabulary")
    cls, sep = ids[opt["cls_token"]], ids[opt["sep_token"]]
    specials = {t: ids[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if t in ids}
    specials.update({opt[k]: ids[opt[k]] for k in ("unk_token", "cls_token", "sep_token")})
    return WordPieceSpec(
        name=name or path.parent.name or path.stem, tokens=tokens, unk_token=opt["unk_token"],
        prefix=opt["wordpieces_prefix"], max_input_chars_per_word=int(opt["max_input_chars_per_word"]),
        normalizer=bert_switches(opt["clean_text"], opt["handle_chinese_chars"], opt["strip_accents"],
                                 opt["lowercase"]),
        single=([cls], [sep]), pair=([cls], [sep], [sep]), special_tokens=specials,
        decoder=(opt["wordpieces_prefix"], True))


def _spec_from_json(doc: object, name: str) -> WordPieceSpec:
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise ModelFormatError("not a tokenizer.json: expected a JSON object with a 'model' object")
    model = doc["model"]
    if model.get("type") != "WordPiece":
        raise ModelFormatError(f"model type {model.get('type')} is not WordPiece")
    vocab = model.get("vocab")
    tokens = strings_by_id(vocab, "model.vocab")
    unk = model.get("unk_token", "[UNK]")
    if unk not in vocab:
        raise ModelFormatError(f"model.unk_token {unk!r} is not in the vocabulary")
    problems: list[str] = []
    normalizer = _normalizer(doc.get("normalizer"), problems)
    pre = doc.get("pre_tokenizer")
    if not (isinstance(pre, dict) and pre.get("type") == "BertPreTokenizer"):
        problems.append(f"pre_tokenizer {pre.get('type') if isinstance(pre, dict) else pre} (BertPreTokenizer only)")
    added = read_added_tokens(doc.get("added_tokens") or [], vocab)
    n_model = len(tokens)
    for content, i in sorted({**added.special, **added.added}.items(), key=lambda item: item[1]):
        if i >= n_model:  # (HF numbers them on from the vocabulary's size, and spells a normalized one normalized)
            normalized = normalizer is not None and added.flags.get(content, AddedTokenFlags()).normalized
            tokens.append(bert_normalize(content, **dict(zip(BERT_DEFAULTS, normalizer))) if normalized else content)
    single, pair = _post_processor(doc.get("post_processor"), problems)
    for i in (*single[0], *single[1], *pair[0], *pair[1], *pair[2]):
        if type(i) is not int or not 0 <= i < len(tokens):  # an id out of range would be read past the vocabulary
            raise ModelFormatError(f"post_processor: the special token id {i!r} is not an id of the vocabulary "
                                   f"(0..{len(tokens) - 1})")
    decoder = doc.get("decoder")
    if decoder is not None and decoder.get("type") != "WordPiece":
        problems.append(f"decoder {decoder.get('type')} (WordPiece only)")
    if problems:
        raise UnsupportedTokenizerError("tokenizer.json uses what sqltok's WordPiece encoder does not support: "
                                        + "; ".join(problems))
    for what, value in (("model.continuing_subword_prefix", model.get("continuing_subword_prefix", "##")),
                        ("decoder.prefix", "##" if decoder is None else decoder.get("prefix", "##"))):
        if not isinstance(value, str):
            raise ModelFormatError(f"{what} {value!r} is not a string")
    max_chars = model.get("max_input_chars_per_word", 100)
    if type(max_chars) is not int or not 0 <= max_chars < 1 << 63:
        raise ModelFormatError(f"model.max_input_chars_per_word {max_chars!r} is not a count of characters")
    return WordPieceSpec(
        name=name, tokens=tokens, unk_token=unk, prefix=model.get("continuing_subword_prefix", "##"),
        max_input_chars_per_word=max_chars, normalizer=normalizer,
        single=single, pair=pair, special_tokens=added.special,
        decoder=None if decoder is None else (decoder.get("prefix", "##"), bool(decoder.get("cleanup", True))),
        n_model=n_model, added_tokens=added.added, added_flags=added.flags)


def _normalizer(spec, problems: list[str]) -> tuple[bool, bool, bool, bool] | None:
    if spec is None:
        return None
    if spec.get("type") != "BertNormalizer":
        problems.append(f"normalizer {spec.get('type')} (BertNormalizer or null only)")
        return None
    return bert_switches(**{k: spec.get(k, v) for k, v in BERT_DEFAULTS.items()})


def _post_processor(spec, problems: list[str]):
    """(single, pair) id lists around the sequences."""
    if spec is None:
        return ([], []), ([], [], [])
    if spec.get("type") == "BertProcessing":
        cls, sep = spec["cls"][1], spec["sep"][1]
        return ([cls], [sep]), ([cls], [sep], [sep])
    if spec.get("type") != "TemplateProcessing":
        problems.append(f"post_processor {spec.get('type')} (TemplateProcessing, BertProcessing or null only)")
        return ([], []), ([], [], [])
    special = {k: v["ids"] for k, v in spec.get("special_tokens", {}).items()}

    def pieces(template, sequences):
        out, at = [[]], 0
        for item in template:
            if "SpecialToken" in item:
                out[-1].extend(special[item["SpecialToken"]["id"]])
            elif item["Sequence"]["id"] == sequences[at]:
                out.append([])
                at += 1
            else:
                problems.append("post_processor template with sequences out of order")
        return out

    single = pieces(spec.get("single", []), ["A"])
    pair = pieces(spec.get("pair", []), ["A", "B"])
    if len(single) != 2 or len(pair) != 3:
        problems.append("post_processor template without its sequences")
        return ([], []), ([], [], [])
    return (single[0], single[1]), (pair[0], pair[1], pair[2])
