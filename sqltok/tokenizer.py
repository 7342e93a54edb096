"""`Tokenizer`: what every tokenizer family offers, tiktoken's API over the family's Arrow entry points,
and `Tokenizer.load(path)`, which picks the family by the file's content.

A family (byte-level BPE, WordPiece, ...) subclasses `Tokenizer`, names the file kinds it reads
(`file_kinds`, see `sqltok.formats.kind`) and implements `from_file`, `n_vocab`, `encode_arrow`,
`decode_arrow` and `decode_single_token_bytes`; the rest comes from here.
"""
from __future__ import annotations

import operator
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import ClassVar, Literal

import pyarrow as pa
import pyarrow.compute as pc
import regex

from sqltok.errors import SqltokError
from sqltok.formats.errors import UnsupportedTokenizerError
from sqltok.formats.kind import TokenizerFile, sniff

AllowedSpecial = Literal["all"] | Collection[str]


class Tokenizer(ABC):
    """A loaded tokenizer of any family; `Tokenizer.load(path)` reads any file sqltok knows."""

    #: The kinds of file (`sqltok.formats.kind.KINDS`) this family reads.
    file_kinds: ClassVar[tuple[str, ...]] = ()
    #: Surrogates in a str: an error, or (True) what tiktoken makes of them (see `text_array`).
    fixes_surrogates: ClassVar[bool] = False
    _families: ClassVar[dict[str, type[Tokenizer]]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for kind in cls.file_kinds:
            Tokenizer._families[kind] = cls

    def __init__(self, name: str, special_tokens: Mapping[str, int]) -> None:
        self.name = name
        self._special_tokens = dict(special_tokens)
        self._special_by_id = {i: s for s, i in self._special_tokens.items()}
        self._token_bytes: pa.Array | None = None
        self._token_strings: pa.Array | None = None

    # -- loading -----------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike, name: str | None = None, **options) -> Tokenizer:
        """The tokenizer in the file at `path`, of the family its content shows (`options` go to the
        family's reader, e.g. `pattern=` for a `.tiktoken` file that is not a standard one)."""
        file = sniff(path)
        family = Tokenizer._families.get(file.kind)
        if family is None:
            raise UnsupportedTokenizerError(f"{file.path} is {file.describe()}; sqltok does not read those yet")
        if not issubclass(family, cls):
            raise SqltokError(f"{file.path} is {file.describe()}, not a file of {cls.__name__}")
        return family.from_file(file, name, **options)

    @classmethod
    @abstractmethod
    def from_file(cls, file: TokenizerFile, name: str | None = None, **options) -> Tokenizer:
        """The tokenizer of a sniffed file of one of `file_kinds`."""

    # -- what a family implements ------------------------------------------------------------------
    @property
    @abstractmethod
    def n_vocab(self) -> int:
        """One more than the largest token id (special tokens included)."""

    @abstractmethod
    def encode_arrow(self, texts: pa.Array, allowed_special: AllowedSpecial = (), threads: int | None = None,
                     counts_only: bool = False) -> pa.Array:
        """Ids (large_list<int32>) or token counts (int64) of a string array; NULL stays NULL."""

    @abstractmethod
    def decode_arrow(self, ids: pa.Array, errors: str = "replace") -> pa.Array:
        """Texts (large_string) of a list<integer> array."""

    @abstractmethod
    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id; ValueError for an id without a token."""

    # -- special tokens ----------------------------------------------------------------------------
    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def _allowed_ids(self, allowed_special: AllowedSpecial) -> set[int] | str | None:
        """"all", the ids of the allowed special tokens, or None when none is allowed."""
        if allowed_special == "all":
            return "all"
        unknown = set(allowed_special) - self.special_tokens_set
        if unknown:
            raise SqltokError(f"not special tokens of {self.name!r}: {sorted(unknown)}")
        return {self._special_tokens[s] for s in allowed_special} or None

    def _split_specials(self, text: str, allowed) -> Iterable[tuple[str, int | None]]:
        """`text` as (segment, None) and ("", special id) pieces, longest special token first."""
        names = [] if allowed is None else [s for s, i in self._special_tokens.items()
                                            if allowed == "all" or i in allowed]
        if not names:
            yield text, None
            return
        pat = regex.compile("|".join(regex.escape(s) for s in sorted(names, key=len, reverse=True)))
        start = 0
        for m in pat.finditer(text):
            yield text[start:m.start()], None
            yield "", self._special_tokens[m.group()]
            start = m.end()
        yield text[start:], None

    def _with_specials(self, texts: pa.Array, ids: pa.Array, allowed, encode_parts,
                       before: Sequence[int] = (), after: Sequence[int] = ()) -> pa.Array:
        """`ids` (of `texts`, special-token text encoded as text) with the rows that hold an allowed
        special token encoded again: the text between special tokens by `encode_parts` (a string
        array -> its ids), each special token as its id, `before` and `after` around the whole (a
        post-processor's template). Rows without special text keep their ids as they are."""
        names = [s for s, i in self._special_tokens.items() if allowed == "all" or i in allowed]
        hit = pc.match_substring_regex(texts, "|".join(re.escape(s) for s in names)).fill_null(False)
        if not pc.any(hit).as_py():
            return ids
        fixed = []
        for r in pc.indices_nonzero(hit).to_pylist():
            parts = list(self._split_specials(texts[r].as_py(), allowed))
            pieces = encode_parts(pa.array([p for p, _ in parts], pa.large_string()))
            fixed.append(list(before) + [x for (_, special), got in zip(parts, pieces.to_pylist())
                                         for x in ([special] if special is not None else got)] + list(after))
        # row r is taken from `ids`, or from `fixed` (appended after them) when it held special text
        order = pc.replace_with_mask(pa.array(range(len(ids)), pa.int64()), hit,
                                     pa.array(range(len(ids), len(ids) + len(fixed)), pa.int64()))
        return pa.concat_arrays([ids, pa.array(fixed, pa.large_list(pa.int32()))]).take(order)

    def _check_disallowed(self, texts: list[str], allowed_special, disallowed_special) -> None:
        """tiktoken's check: ValueError when a disallowed special token's text appears."""
        if disallowed_special == "all":
            allowed = self.special_tokens_set if allowed_special == "all" else set(allowed_special)
            disallowed = self.special_tokens_set - allowed
        else:
            disallowed = set(disallowed_special)
        for text in texts:
            for s in disallowed:
                if s in text:
                    raise ValueError(
                        f"Encountered text corresponding to disallowed special token {s!r}.\n"
                        f"Pass allowed_special={{{s!r}, ...}} (or 'all') to encode it as a special token, "
                        "or disallowed_special=() to encode it as normal text.")

    # -- Arrow helpers -----------------------------------------------------------------------------
    def tokens_arrow(self, texts: pa.Array) -> pa.Array:
        """Each row's tokens as strings (list<large_string>), taken from `token_strings()`."""
        ids = self.encode_arrow(texts)
        first = ids.offsets[0].as_py()
        return pa.LargeListArray.from_arrays(pc.subtract(ids.offsets, first), self.token_strings().take(ids.values),
                                             mask=ids.is_null() if ids.null_count else None)

    def token_bytes_array(self) -> pa.Array:
        """Every token's bytes by id (large_binary), built once; ids without a token are NULL."""
        if self._token_bytes is None:
            tokens = []
            for t in range(self.n_vocab):
                try:
                    tokens.append(self.decode_single_token_bytes(t))
                except ValueError:
                    tokens.append(None)
            self._token_bytes = pa.array(tokens, pa.large_binary())
        return self._token_bytes

    def token_strings(self) -> pa.Array:
        """Every token's text by id (large_string), built once from `token_bytes_array()`; bytes
        that are not UTF-8 on their own become U+FFFD, ids without a token are NULL."""
        if self._token_strings is None:
            tokens = self.token_bytes_array()
            try:
                self._token_strings = tokens.cast(pa.large_string())
            except pa.ArrowInvalid:  # byte-level pieces of a character
                self._token_strings = pa.array([None if t is None else t.decode("utf-8", "replace")
                                                for t in tokens.to_pylist()], pa.large_string())
        return self._token_strings

    def _encode_lists(self, texts: pa.Array, allowed_special: AllowedSpecial,
                      threads: int | None) -> list[list[int]]:
        """The ids of every text (an array from `_text_array`) as Python lists."""
        return self.encode_arrow(texts, allowed_special, threads).to_pylist()

    def _text_array(self, texts: Sequence[str]) -> pa.Array:
        """Python strings as the family's encoder takes them (see `text_array`)."""
        return text_array(texts, self.fixes_surrogates)

    # -- tiktoken-style Python API -----------------------------------------------------------------
    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: AllowedSpecial = "all") -> list[int]:
        """Token ids of `text`; special tokens as tiktoken: matched only when allowed, an error when a
        disallowed one appears."""
        return self.encode_batch([text], allowed_special=allowed_special,
                                 disallowed_special=disallowed_special, num_threads=1)[0]

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text encoded as ordinary text."""
        return self._encode_lists(self._text_array([text]), (), 1)[0]

    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None,
                     allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: AllowedSpecial = "all") -> list[list[int]]:
        """`encode` of every text, on `num_threads` threads (default: up to 2)."""
        texts = require_str(texts)
        self._check_disallowed(texts, allowed_special, disallowed_special)
        return self._encode_lists(arrow_texts(texts, self.fixes_surrogates), allowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ordinary` of every text."""
        return self._encode_lists(self._text_array(texts), (), num_threads)

    def token_count(self, text: str) -> int:
        """How many tokens `encode_ordinary(text)` gives."""
        return self.encode_arrow(self._text_array([text]), (), 1, counts_only=True)[0].as_py()

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """The text of `ids`; bytes that are not UTF-8 become U+FFFD unless errors="strict"."""
        return self.decode_arrow(id_array(ids), errors)[0].as_py()

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of `ids`."""
        return self.decode(ids).encode()

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """The bytes of each id."""
        return [self.decode_single_token_bytes(t) for t in ids]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} n_vocab={self.n_vocab}>"


def require_str(texts: Sequence[str]) -> list[str]:
    """`texts` as a list, TypeError naming the first that is not a str (tiktoken takes str only)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"expected a list of str, not {type(texts).__name__}")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"text {i} is {type(t).__name__}, not str" if len(texts) > 1 else
                            f"text must be str, not {type(t).__name__}")
    return texts


def text_array(texts: Sequence[str], fix_surrogates: bool = False) -> pa.Array:
    """A large_string array of Python strings (TypeError for anything else). Surrogates, which UTF-8
    cannot hold, are a clear error, or with `fix_surrogates` become what tiktoken makes of them: a
    pair the character it encodes, a lone one U+FFFD."""
    return arrow_texts(require_str(texts), fix_surrogates)


def arrow_texts(texts: list[str], fix_surrogates: bool = False) -> pa.Array:
    """`text_array` of texts already known to be str."""
    try:
        return pa.array(texts, pa.large_string())
    except (UnicodeEncodeError, pa.ArrowInvalid) as e:
        if not fix_surrogates:
            raise SqltokError(f"text is not valid Unicode (a lone surrogate?): {e}") from None
    return pa.array([t.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for t in texts],
                    pa.large_string())


def id_array(ids: Sequence[int]) -> pa.Array:
    """One row of token ids (large_list<int32>); TypeError for anything that is not an integer, as
    tiktoken gives. A short sequence is checked id by id (cheaper than Arrow's setup, 3.6 against
    9 us for 15 ids); a long one converts in C when it is all integers (6,000 ids: 0.15 against
    0.23 ms a decode) and is only looked at id by id when it is not."""
    if len(ids) < 64:
        return pa.array([[operator.index(i) for i in ids]], pa.large_list(pa.int32()))
    try:
        values = pa.array(ids)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        values = None
    if values is None or not pa.types.is_integer(values.type):
        values = pa.array([operator.index(i) for i in ids], pa.int64())
    return pa.LargeListArray.from_arrays(pa.array([0, len(values)], pa.int64()), values.cast(pa.int32()))
