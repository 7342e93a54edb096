"""A SentencePiece-style HF tokenizer.json (model `Unigram`, or `BPE` with `byte_fallback`, as
`transformers`' converters write them) read into the `SentencePieceModel` that the `.model` reader
produces, so that the SentencePiece encoder runs it.

Two kinds of pipeline are read:
- the generic converter's and Llama's, whose HF semantics equal a setting of sentencepiece's
  normalizer: Sequence of Precompiled (the charsmap), Replace(`\\A +| +\\z` -> "") with
  Replace(` {2,}` -> " ") (`remove_extra_whitespaces`, but for a trailing "▁" of the text, which
  HF keeps: the encoder's `hf_json`), Replace(" " -> "▁") (`escape_whitespaces`;
  Gemma's, with a Split(" ", MergedWithPrevious) that then finds no space), Replace(`\\A▁` -> "▁▁")
  before Metaspace "always", Prepend("▁") (Llama 2's legacy dummy prefix), Metaspace "first",
  Replace(`\\z` -> "▁") after Replace(" " -> "▁") (treat_whitespace_as_suffix's dummy "▁");
- the model converters' (T5, XLM-R, ALBERT, XLNet, older T5 files): Replace of a string, NFKD,
  StripAccents, Lowercase before Precompiled (`hf_text_steps`), then Strip(right), Replace(` {2,}`),
  WhitespaceSplit and Metaspace "always" or "never", run as HF's own steps (`hf_whitespace.pxd`);
- pre_tokenizer: Metaspace (`split` only when no piece holds a "▁" after its start), then
  Split(Isolated) of the user-defined pieces (generic pipelines);
- BPE: ranks from `merges`, turned into scores that make sentencepiece's highest-score-first merge
  order HF's lowest-rank-first (checked: every pair sentencepiece could join is a listed merge,
  each piece's merges are consecutive); `fuse_unk` true; `ignore_merges` (a word that is a piece
  is that piece: the words are HF's pre-tokens, see `HfSentencePiece.ignore_merges`);
- decoder: Sequence[Replace("▁" -> " "), ByteFallback?, Fuse?, Strip(" ", 1, 0)?], or Metaspace
  (see `HfDecoder`); a TemplateProcessing post-processor adds nothing to sqltok's `encode`, which
  is HF's `add_special_tokens=False`.

Anything else is refused with an `UnsupportedTokenizerError` naming every component at once.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

from sqltok.added_tokens import AddedTokenFlags, HfAddedTokens, read_added_tokens
from sqltok.formats.errors import ModelFormatError, UnsupportedTokenizerError
from sqltok.formats.json_file import strings_by_id
from sqltok.sentencepiece.hf_text_steps import TextStep, text_step_of
from sqltok.sentencepiece.model_proto import (BYTE_PIECE, ModelType, NormalizerSpec, PieceType, SentencePieceModel,
                                              TrainerSpec, check_model)

SPACE = "\u2581"
_TRIM = r"\A +| +\z"
_COLLAPSE = " {2,}"
_DOUBLE = r"\A" + SPACE
_SUFFIX = r"\z"


@dataclass(frozen=True)
class HfDecoder:
    """HF's decoder chain over token strings: "▁" -> " " (`replace_space`), runs of <0xHH> tokens
    as their bytes, or one U+FFFD per byte when a run is no UTF-8 (`byte_fallback`), one leading
    space of the whole text dropped (`strip_first`: Fuse then Strip(" ", 1, 0)), or every "▁" of
    the first token dropped (`drop_first_spaces`: the Metaspace decoder, unless prepend_scheme is
    "never")."""

    replace_space: bool
    byte_fallback: bool
    strip_first: bool
    drop_first_spaces: bool = False


@dataclass(frozen=True)
class HfSentencePiece:
    """What a tokenizer.json asks of the SentencePiece encoder beyond its model: `prefix_first`
    (Metaspace "first": "▁" before a text that does not start with " " or "▁"), the normalizer
    steps before the charsmap (`text_steps`), HF's whitespace steps in place of sentencepiece's
    (`whitespace`: strip_right, collapse, split_words, prefix; see hf_whitespace.pxd), the special
    tokens by content, and the decoder."""

    model: SentencePieceModel
    prefix_first: bool
    special_tokens: dict[str, int]
    decoder: HfDecoder
    text_steps: tuple[TextStep, ...] = ()
    whitespace: tuple[bool, bool, bool, bool] | None = None
    added_tokens: dict[str, int] = field(default_factory=dict)   # not special: matched always
    added_flags: dict[str, AddedTokenFlags] = field(default_factory=dict)  # of the added tokens with any set
    # BPE ignore_merges: "texts" (a word is a text between user-defined pieces) or "words" (Metaspace
    # split: cut before each "▁" too); None when off
    ignore_merges: str | None = None
    # the normalizer's and the pre-tokenizer's steps as the file lists them (for HF's offsets)
    hf_normalizer: tuple[dict, ...] = ()
    hf_pre_tokenizer: tuple[dict, ...] = ()


def _describe(value: object) -> str:
    if isinstance(value, dict):
        inner = next((value[k] for k in ("normalizers", "pretokenizers", "decoders") if isinstance(value.get(k), list)),
                     None)
        if inner is not None:
            return "Sequence[" + ", ".join(_describe(v) for v in inner) + "]"
        return str(value.get("type"))
    return "null" if value is None else repr(value)[:60]


def _steps(value: object, key: str) -> list:
    if value is None:
        return []
    if isinstance(value, dict) and value.get("type") == "Sequence":
        return list(value.get(key) or [])
    return [value]


def _replace(step: dict) -> tuple[str, str, str] | None:
    """("Regex" or "String", pattern, content) of a Replace step."""
    pattern = step.get("pattern")
    if step.get("type") != "Replace" or not isinstance(pattern, dict) or len(pattern) != 1:
        return None
    (kind, text), = pattern.items()
    return kind, text, step.get("content")


@dataclass
class _Options:
    charsmap: bytes = b""
    text_steps: list[TextStep] = field(default_factory=list)  # before Precompiled (see hf_text_steps)
    remove_extra_whitespaces: bool = False
    escape_whitespaces: bool = False
    doubled: bool = False             # Replace(\A▁ -> ▁▁): Metaspace "always" then prefixes every text
    suffix: bool = False              # Replace(\z -> ▁): the dummy "▁" of treat_whitespace_as_suffix
    prepend: bool = False             # Prepend("▁")
    strip_right: bool = False         # Strip(right) (HF whitespace mode, see hf_whitespace.pxd)
    collapse: bool = False            # Replace( {2,} -> " " or "▁") without the \A +| +\z trim (HF mode)
    split_words: bool = False         # WhitespaceSplit before Metaspace (HF mode)
    metaspace: bool = False
    hf_whitespace: bool = False       # HF's whitespace steps stand in for sentencepiece's (see _pre_tokenizer)
    scheme: str | None = None         # Metaspace prepend_scheme
    split: bool = False
    user_defined: tuple[str, ...] = ()


def _normalizer(norm: object, o: _Options, problems: list[str]) -> None:
    steps = _steps(norm, "normalizers")
    seen: list[str] = []
    for step in steps:
        kind = step.get("type") if isinstance(step, dict) else None
        rep = _replace(step) if kind == "Replace" else None
        text_step = text_step_of(step) if not seen else None
        if text_step is not None and rep != ("String", " ", SPACE):
            o.text_steps.append(text_step)
        elif kind == "Precompiled" and not seen:
            try:
                o.charsmap = base64.b64decode(step.get("precompiled_charsmap") or "", validate=True)
            except (binascii.Error, TypeError):
                raise ModelFormatError("normalizer Precompiled: precompiled_charsmap is not base64") from None
            seen.append("charsmap")
        elif rep == ("Regex", _TRIM, "") and not {"collapse", "escape"} & set(seen):
            seen.append("trim")
        elif rep == ("Regex", _COLLAPSE, " ") and seen[-1:] == ["trim"]:
            seen.append("collapse")
            o.remove_extra_whitespaces = True
        elif kind == "Strip" and (step.get("strip_left"), step.get("strip_right")) == (False, True) \
                and set(seen) <= {"charsmap"}:
            seen.append("strip")
            o.strip_right = True
        elif rep in (("Regex", _COLLAPSE, " "), ("Regex", _COLLAPSE, SPACE)) and set(seen) <= {"charsmap", "strip"}:
            seen.append("collapse")
            o.collapse = True
        elif rep == ("String", " ", SPACE) and "escape" not in seen:
            seen.append("escape")
            o.escape_whitespaces = True
        elif rep == ("Regex", _DOUBLE, SPACE + SPACE) and seen[-1:] == ["escape"]:
            seen.append("double")
            o.doubled = True
        elif rep == ("Regex", _SUFFIX, SPACE) and seen[-1:] == ["escape"]:
            seen.append("suffix")
            o.suffix = True
        elif kind == "Prepend" and step.get("prepend") == SPACE and not seen:
            seen.append("prepend")
            o.prepend = True
        else:
            problems.append(f"normalizer step {_describe(step)} in {_describe(norm)} (sqltok reads Replace of a "
                            "string, NFC/NFD/NFKC/NFKD, StripAccents and Lowercase before Precompiled, then "
                            "SentencePiece's whitespace steps, Strip(right), Replace( {2,}), Prepend('▁'), in "
                            "the converters' order)")
            return
    if "trim" in seen and not o.remove_extra_whitespaces:
        problems.append(f"normalizer {_describe(norm)}: Replace(\\A +| +\\z) without Replace( {{2,}})")
    if o.prepend and seen != ["prepend", "escape"]:
        problems.append(f"normalizer {_describe(norm)}: Prepend('▁') only with Replace(' ' -> '▁') after it")
    if (o.strip_right or o.collapse) and o.escape_whitespaces:
        problems.append(f"normalizer {_describe(norm)}: Strip or Replace( {{2,}}) with Replace(' ' -> '▁')")


def _pre_tokenizer(pre: object, o: _Options, problems: list[str]) -> None:
    for step in _steps(pre, "pretokenizers"):
        kind = step.get("type") if isinstance(step, dict) else None
        if kind == "Metaspace" and o.scheme is None and not o.user_defined:
            if step.get("replacement") != SPACE:
                problems.append(f"pre_tokenizer Metaspace with replacement {step.get('replacement')!r}")
            o.scheme = metaspace_scheme(step)
            if o.scheme not in ("always", "first", "never"):
                problems.append(f"pre_tokenizer Metaspace with prepend_scheme {o.scheme!r}")
            o.split = bool(step.get("split", True))
            o.metaspace = True
        elif kind == "WhitespaceSplit" and o.scheme is None and not o.split_words:
            o.split_words = True
        elif kind == "Split" and step.get("pattern") == {"String": " "} and step.get("behavior") == "MergedWithPrevious" \
                and not step.get("invert") and o.escape_whitespaces and not o.metaspace:
            pass  # Gemma's: after Replace(' ' -> '▁') there is no space left to split at
        elif kind == "Split" and not o.user_defined and step.get("behavior") == "Isolated" \
                and not step.get("invert") and isinstance(step.get("pattern"), dict) \
                and isinstance(step["pattern"].get("Regex"), str):
            o.user_defined = tuple(_alternatives(step["pattern"]["Regex"]))
            if not o.user_defined:
                problems.append("pre_tokenizer Split whose pattern is not the user-defined pieces, escaped and "
                                "joined by '|'")
        else:
            problems.append(f"pre_tokenizer step {_describe(step)} in {_describe(pre)} (sqltok reads Metaspace, "
                            "WhitespaceSplit before it, then Split(Isolated) of the user-defined pieces)")
            return
    if o.split_words and not o.metaspace:
        problems.append(f"pre_tokenizer {_describe(pre)}: WhitespaceSplit without a Metaspace after it")
    # a Metaspace "always" or "never" over a normalizer without the generic converter's whitespace
    # rules runs as HF's steps; otherwise the rules (or Metaspace "first") are sentencepiece's options
    o.hf_whitespace = o.metaspace and o.scheme != "first" and not (
        o.remove_extra_whitespaces or o.doubled or o.prepend or o.escape_whitespaces)
    if o.metaspace and not o.hf_whitespace:
        o.escape_whitespaces = True
    if o.split_words and o.metaspace and not o.hf_whitespace:
        problems.append(f"pre_tokenizer {_describe(pre)}: WhitespaceSplit after SentencePiece's whitespace Replace "
                        "steps or before a Metaspace 'first'")
    if (o.strip_right or o.collapse) and not o.hf_whitespace:
        problems.append(f"normalizer Strip or Replace( {{2,}}) without a Metaspace 'always' or 'never' after it")


def metaspace_scheme(step: dict) -> object:
    """A Metaspace's prepend_scheme (older files: add_prefix_space)."""
    return step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")


def _alternatives(pattern: str) -> list[str]:
    """The literal pieces of `re.escape(a)|re.escape(b)|...`, or [] when it is not of that form."""
    pieces = [re.sub(r"\\(.)", r"\1", p, flags=re.S) for p in re.split(r"(?<!\\)\|", pattern)]
    return pieces if all(pieces) and "|".join(map(re.escape, pieces)) == pattern else []


def _decoder(dec: object, problems: list[str]) -> HfDecoder:
    steps = _steps(dec, "decoders")
    if len(steps) == 1 and isinstance(steps[0], dict) and steps[0].get("type") == "Metaspace" \
            and steps[0].get("replacement") == SPACE and metaspace_scheme(steps[0]) in ("always", "first", "never"):
        return HfDecoder(True, False, False, metaspace_scheme(steps[0]) != "never")
    kinds = []
    for step in steps:
        kind = step.get("type") if isinstance(step, dict) else None
        if kind == "Replace" and _replace(step) == ("String", SPACE, " ") and not kinds:
            kinds.append("replace")
        elif kind == "ByteFallback" and kinds == ["replace"]:
            kinds.append("bytes")
        elif kind == "Fuse" and "fuse" not in kinds:
            kinds.append("fuse")
        elif kind == "Strip" and kinds[-1:] == ["fuse"] and (step.get("content"), step.get("start"),
                                                               step.get("stop")) == (" ", 1, 0):
            kinds.append("strip")
        else:
            problems.append(f"decoder step {_describe(step)} in {_describe(dec)} (sqltok reads Replace('▁' -> ' '), "
                            "ByteFallback, Fuse, Strip(' ', 1, 0), or a Metaspace alone)")
            break
    return HfDecoder("replace" in kinds, "bytes" in kinds, "strip" in kinds)


def _added(entries: object, vocab: dict[str, int], normalizes: bool, problems: list[str]) -> HfAddedTokens:
    """The added tokens with the ids HF gives them (`read_added_tokens`); each must be a vocabulary
    piece (the converters' control and user-defined pieces), and a `normalized` one is matched in
    the raw text only when the tokenizer has no normalizer (`normalizes` false)."""
    added = read_added_tokens(entries, vocab)
    for content in [*added.special, *added.added]:
        if content not in vocab:
            problems.append(f"added token {content!r} that is not a vocabulary piece")
        if normalizes and added.flags.get(content, AddedTokenFlags()).normalized:
            problems.append(f"added token {content!r} with normalized true under a normalizer (HF matches it in "
                            "the normalized text; sqltok matches SentencePiece added tokens in the raw text)")
    return added


def _piece_types(pieces: list[str], unk: int | None, special: dict[str, int], user_defined: tuple[str, ...],
                 byte_fallback: bool) -> list[PieceType]:
    types = [PieceType.NORMAL] * len(pieces)
    for i, p in enumerate(pieces):
        if byte_fallback and BYTE_PIECE.fullmatch(p):
            types[i] = PieceType.BYTE
    for p in user_defined:
        if p in special:
            continue
        types[pieces.index(p)] = PieceType.USER_DEFINED
    for i in special.values():
        types[i] = PieceType.CONTROL
    if unk is not None:
        types[unk] = PieceType.UNKNOWN
    return types


def _unigram(model: dict) -> tuple[list[str], list[float], int | None]:
    vocab = model.get("vocab")
    if not isinstance(vocab, list) or not all(isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)
                                              and isinstance(e[1], (int, float)) for e in vocab):
        raise ModelFormatError("model.vocab of a Unigram model must be a list of [piece, score]")
    if not vocab:
        raise ModelFormatError("model.vocab is empty (truncated?)")
    unk = model.get("unk_id")
    if unk is not None and not (isinstance(unk, int) and 0 <= unk < len(vocab)):
        raise ModelFormatError(f"model.unk_id {unk!r} is no piece's id")
    return [p for p, _ in vocab], [float(s) for _, s in vocab], unk


def _bpe(model: dict, problems: list[str]) -> tuple[list[str], list[float], int | None]:
    """Pieces by id, scores whose order is the merges' ranks, and the unknown piece's id."""
    vocab = model.get("vocab")
    pieces = strings_by_id(vocab, "model.vocab of a BPE model")
    if not model.get("fuse_unk", False):
        problems.append("model.fuse_unk false")
    if model.get("dropout") not in (None, 0, 0.0):
        problems.append(f"model.dropout {model['dropout']}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            problems.append(f"model.{key} {model[key]!r}")
    unk_token = model.get("unk_token")
    if unk_token is not None and unk_token not in vocab:
        raise ModelFormatError(f"model.unk_token {unk_token!r} is not in the vocabulary")
    merges = model.get("merges")
    if not isinstance(merges, list):
        raise ModelFormatError("model.merges must be a list")
    rank_of: dict[str, int] = {}     # the block of consecutive merges that makes each piece
    pairs: set[tuple[str, str]] = set()
    last = None
    for rank, merge in enumerate(merges):
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not (isinstance(parts, list) and len(parts) == 2 and all(isinstance(x, str) for x in parts)):
            raise ModelFormatError(f"merge {rank}: expected 'left right' or [left, right]")
        a, b = parts
        if a not in vocab or b not in vocab or a + b not in vocab:
            raise ModelFormatError(f"merge {rank} ({a!r}, {b!r}): a piece is not in the vocabulary")
        if a + b != last:
            if a + b in rank_of:
                problems.append(f"model.merges: the merges of {a + b!r} are not consecutive (merge {rank}), "
                                "so no SentencePiece score order gives HF's ranks")
                break
            rank_of[a + b] = len(rank_of)
            last = a + b
        pairs.add((a, b))
    for p in pieces:
        for k in range(1, len(p)):
            left, right = p[:k], p[k:]
            if (left in vocab or len(left) == 1) and (right in vocab or len(right) == 1) and (left, right) not in pairs:
                problems.append(f"model.merges lacks ({left!r}, {right!r}), which SentencePiece's BPE would join "
                                f"into {p!r}")
                break
        else:
            continue
        break
    scores = [-float(rank_of.get(p, len(rank_of))) for p in pieces]
    return pieces, scores, None if unk_token is None else vocab[unk_token]


def read_hf_sentencepiece(doc: dict) -> HfSentencePiece:
    """The model and HF pipeline of a parsed SentencePiece-style tokenizer.json (kind `hf-unigram`
    or `hf-sp-bpe`); errors say what is wrong or which components sqltok does not read."""
    model = doc.get("model")
    if not isinstance(model, dict) or model.get("type") not in ("Unigram", "BPE"):
        raise ModelFormatError("not a SentencePiece-style tokenizer.json: model.type must be Unigram or BPE")
    problems: list[str] = []
    o = _Options()
    _normalizer(doc.get("normalizer"), o, problems)
    _pre_tokenizer(doc.get("pre_tokenizer"), o, problems)
    decoder = _decoder(doc.get("decoder"), problems)
    for key in ("truncation", "padding", "post_processor"):
        value = doc.get(key)
        if value is not None and not (key == "post_processor" and _template(value)):
            problems.append(f"{key} {_describe(value)} is set (sqltok encodes whole texts without additions)")
    bpe = model["type"] == "BPE"
    byte_fallback = bool(model.get("byte_fallback", False))
    pieces, scores, unk = _bpe(model, problems) if bpe else _unigram(model)
    vocab = {p: i for i, p in enumerate(pieces)}
    missing = [p for p in o.user_defined if p not in vocab]
    if missing:
        problems.append(f"pre_tokenizer Split isolates {missing[:3]}, which are not vocabulary pieces")
    added = _added(doc.get("added_tokens") or [], vocab, bool(_steps(doc.get("normalizer"), "normalizers")), problems)
    special = added.special
    words = o.split or o.split_words
    if words and (any(SPACE in p.lstrip(SPACE) for p in pieces) or SPACE not in vocab):
        problems.append("pre_tokenizer Metaspace split true or WhitespaceSplit with a piece that holds '▁' after "
                        "its start, or without the piece '▁' (HF encodes each word apart)")
    if o.doubled and o.scheme != "always":
        problems.append("normalizer Replace(\\A▁ -> ▁▁) without Metaspace prepend_scheme 'always'")
    if o.hf_whitespace and o.user_defined:
        problems.append("pre_tokenizer Split of user-defined pieces after a Metaspace without SentencePiece's "
                        "whitespace Replace steps")
    if o.scheme == "always" and not o.doubled and not o.hf_whitespace:
        problems.append("pre_tokenizer Metaspace prepend_scheme 'always' without the normalizer's "
                        "Replace(\\A▁ -> ▁▁) (HF then adds no '▁' before a text that starts with one)")
    if o.scheme == "first" and (o.charsmap or o.remove_extra_whitespaces or o.text_steps or o.split_words):
        problems.append("pre_tokenizer Metaspace prepend_scheme 'first' after a Precompiled or whitespace-removing "
                        "normalizer, normalizer steps or WhitespaceSplit")
    if o.suffix and o.scheme is not None:
        problems.append("normalizer Replace(\\z -> ▁) together with a Metaspace pre_tokenizer")
    if o.prepend and o.scheme is not None:
        problems.append("normalizer Prepend('▁') together with a Metaspace pre_tokenizer")
    ignore_merges = bpe and bool(model.get("ignore_merges", False))
    if ignore_merges and o.hf_whitespace:
        problems.append("model.ignore_merges true with a Metaspace 'always' or 'never' without SentencePiece's "
                        "whitespace Replace steps (HF's words are not the encoder's there)")
    if unk is None and not byte_fallback:
        problems.append(f"model {model['type']} without an unknown token or byte_fallback (HF then drops "
                        "unknown characters)")
    if problems:
        raise UnsupportedTokenizerError("tokenizer.json uses what sqltok's SentencePiece encoder does not "
                                        "support: " + "; ".join(problems))
    add_dummy_prefix = (o.prepend or o.suffix or o.scheme == "always") and not o.hf_whitespace
    sp = SentencePieceModel(
        pieces, scores, _piece_types(pieces, unk, special, o.user_defined, byte_fallback),
        TrainerSpec(model_type=ModelType.BPE if bpe else ModelType.UNIGRAM, vocab_size=len(pieces),
                    byte_fallback=byte_fallback, unk_id=-1 if unk is None else unk,
                    treat_whitespace_as_suffix=o.suffix),
        NormalizerSpec(name="hf", precompiled_charsmap=o.charsmap, add_dummy_prefix=add_dummy_prefix,
                       remove_extra_whitespaces=o.remove_extra_whitespaces,
                       escape_whitespaces=o.escape_whitespaces and not o.hf_whitespace))
    check_model(sp, "tokenizer.json")
    whitespace = (o.strip_right, o.collapse, o.split_words, o.scheme == "always") if o.hf_whitespace else None
    return HfSentencePiece(sp, o.scheme == "first", special, decoder, tuple(o.text_steps), whitespace,
                           added.added, added.flags, ("words" if o.split else "texts") if ignore_merges else None,
                           tuple(_steps(doc.get("normalizer"), "normalizers")),
                           tuple(_steps(doc.get("pre_tokenizer"), "pretokenizers")))


def _template(post: object) -> bool:
    """A TemplateProcessing: what it adds around a text (T5's "</s>", XLM-R's "<s> ... </s>") is
    HF's `add_special_tokens=True`; sqltok's `encode` is HF's `encode(text, add_special_tokens=False)`,
    which adds nothing."""
    return isinstance(post, dict) and post.get("type") == "TemplateProcessing"
