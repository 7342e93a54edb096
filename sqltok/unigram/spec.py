"""The Unigram trainer's settings: SentencePiece's flags, under its names and with its defaults, checked
as `spm_train` checks them, and the meta pieces (unknown, control, user-defined, byte) they give."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from sqltok.errors import SqltokError

#: The normalization rules sqltok ships the precompiled charsmaps of ("identity": none).
NORMALIZATION_RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")

#: ModelProto.SentencePiece.Type values.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6


class UnigramSpecError(SqltokError):
    """A Unigram training setting out of range or inconsistent."""


@dataclass(frozen=True)
class UnigramSpec:
    """SentencePiece's `TrainerSpec` (and the `NormalizerSpec` flags) for `--model_type=unigram`."""

    vocab_size: int = 8000
    character_coverage: float = 0.9995
    seed_sentencepiece_size: int = 1_000_000
    shrinking_factor: float = 0.75
    num_sub_iterations: int = 2
    max_sentencepiece_length: int = 16
    max_sentence_length: int = 4192
    split_by_whitespace: bool = True
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_digits: bool = False
    treat_whitespace_as_suffix: bool = False
    byte_fallback: bool = False
    user_defined_symbols: tuple[str, ...] = field(default_factory=tuple)
    control_symbols: tuple[str, ...] = field(default_factory=tuple)
    normalization_rule_name: str = "nmt_nfkc"
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"

    def __post_init__(self) -> None:
        object.__setattr__(self, "user_defined_symbols", tuple(self.user_defined_symbols))
        object.__setattr__(self, "control_symbols", tuple(self.control_symbols))
        self._check()

    def _check(self) -> None:
        ranges = (("vocab_size", 1, 2**31 - 1), ("character_coverage", 0.98, 1.0),
                  ("max_sentencepiece_length", 1, 512), ("num_sub_iterations", 1, 10),
                  ("shrinking_factor", 0.5, 0.95), ("max_sentence_length", 10, 1073741824),
                  ("seed_sentencepiece_size", 1, 2**31 - 1))
        for name, low, high in ranges:
            value = getattr(self, name)
            if not low <= value <= high:
                raise UnigramSpecError(f"{name} must be in [{low}, {high}], not {value}")
        if self.normalization_rule_name not in NORMALIZATION_RULES:
            raise UnigramSpecError(f"normalization rule {self.normalization_rule_name!r} is not one sqltok "
                                   f"implements; use one of {', '.join(NORMALIZATION_RULES)}")
        for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece"):
            if not getattr(self, name):
                raise UnigramSpecError(f"{name} must not be empty")
        for symbol in self.user_defined_symbols + self.control_symbols:
            if not symbol:
                raise UnigramSpecError("user-defined and control symbols must not be empty")
        self.meta_pieces()

    def flags(self) -> dict:
        """The settings as a plain dict (for the store and the Cython kernels)."""
        return asdict(self)

    def meta_pieces(self) -> dict[int, tuple[str, int]]:
        """Id -> (piece, type) of the unknown, BOS, EOS, PAD, control, user-defined and byte pieces,
        placed as SentencePiece places them (the reserved ids first, the others in the first free ids)."""
        meta: dict[int, tuple[str, int]] = {}
        has_unk = False
        for id_, piece in ((self.unk_id, self.unk_piece), (self.bos_id, self.bos_piece),
                           (self.eos_id, self.eos_piece), (self.pad_id, self.pad_piece)):
            if id_ < 0:
                continue
            if id_ >= self.vocab_size or id_ in meta or (has_unk and piece == self.unk_piece):
                raise UnigramSpecError(f"the id {id_} of {piece!r} is taken or not below vocab_size "
                                       f"{self.vocab_size}")
            has_unk = has_unk or piece == self.unk_piece
            meta[id_] = (piece, UNKNOWN if piece == self.unk_piece else CONTROL)
        if not has_unk:
            raise UnigramSpecError(f"{self.unk_piece} must be defined (unk_id >= 0)")
        reserved = {self.bos_piece: self.bos_id, self.eos_piece: self.eos_id, self.pad_piece: self.pad_id}
        seen: set[str] = set()
        next_id = 0
        symbols = [(s, CONTROL) for s in self.control_symbols] + [(s, USER_DEFINED) for s in self.user_defined_symbols]
        if self.byte_fallback:
            symbols += [(f"<0x{b:02X}>", BYTE) for b in range(256)]
        for piece, kind in symbols:
            if piece in seen:
                raise UnigramSpecError(f"{piece} is already defined. duplicated symbols are not allowed.")
            seen.add(piece)
            if piece == self.unk_piece:
                raise UnigramSpecError(f"{self.unk_piece} must not be defined with --control_symbols and "
                                       "--user_defined_symbols.")
            if reserved.get(piece, -1) >= 0:
                meta[reserved[piece]] = (piece, kind)
                continue
            while next_id in meta:
                next_id += 1
            meta[next_id] = (piece, kind)
        return meta
