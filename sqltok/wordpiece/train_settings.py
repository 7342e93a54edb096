"""What a WordPiece training run takes, with `BertWordPieceTokenizer().train`'s defaults, checked once."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from sqltok.bpe.settings import check_special_tokens
from sqltok.errors import SqltokError

#: `BertWordPieceTokenizer.train`'s special tokens, in its order (their ids are 0..4).
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


@dataclass(frozen=True)
class WordPieceSettings:
    """HF WordPieceTrainer's options and the BERT normalizer's switches; the defaults are
    `BertWordPieceTokenizer().train(files)`'s."""

    vocab_size: int = 30000
    min_frequency: int = 2
    limit_alphabet: int | None = 1000
    initial_alphabet: tuple[str, ...] = ()
    special_tokens: tuple[str, ...] = BERT_SPECIAL_TOKENS
    unk_token: str = "[UNK]"
    prefix: str = "##"
    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    def __post_init__(self) -> None:
        for name in ("vocab_size", "min_frequency"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise SqltokError(f"{name} must be a non-negative integer, not {value!r}")
        if self.limit_alphabet is not None and (not isinstance(self.limit_alphabet, int) or self.limit_alphabet < 0):
            raise SqltokError(f"limit_alphabet must be a non-negative integer or None, not {self.limit_alphabet!r}")
        if isinstance(self.initial_alphabet, str) or \
                any(not isinstance(c, str) or len(c) != 1 for c in self.initial_alphabet):
            raise SqltokError(f"initial_alphabet is a list of single characters, not {self.initial_alphabet!r}")
        object.__setattr__(self, "initial_alphabet", tuple(self.initial_alphabet))
        object.__setattr__(self, "special_tokens", check_special_tokens(self.special_tokens))
        if self.unk_token not in self.special_tokens:
            raise SqltokError(f"the unknown token {self.unk_token!r} must be one of the special tokens "
                              f"{list(self.special_tokens)} (WordPiece encodes what it cannot split as it)")
        if not isinstance(self.prefix, str) or not self.prefix:
            raise SqltokError(f"the continuing-subword prefix must be a non-empty string, not {self.prefix!r}")

    def with_vocab_size(self, vocab_size: int) -> "WordPieceSettings":
        return replace(self, vocab_size=vocab_size)

    def as_dict(self) -> dict:
        """The settings as the model row keeps them (JSON)."""
        d = asdict(self)
        d["initial_alphabet"] = list(self.initial_alphabet)
        d["special_tokens"] = list(self.special_tokens)
        return d
