"""`Tokenizer`: what every tokenizer family offers, tiktoken's API over the family's entry points, and
`Tokenizer.load(path)`, which picks the family by the file's content.

A family (byte-level BPE, WordPiece, ...) subclasses `Tokenizer`, names the file kinds it reads
(`file_kinds`, see `sqltok.formats.kind`) and implements `from_file`, `n_vocab`, `encode_arrow`,
`decode_arrow`, `decode_single_token_bytes`, `vocabularies` and `encode_with_offsets`, and sets
`_pickle_as` when it builds a tokenizer; the rest comes from here: tiktoken's whole `Encoding` API,
HF's vocabulary lookups and pickling. Single texts and short lists take the direct path
(`_encode_texts`, `_encode_text`, `_decode_ids`), which goes through Arrow unless the family gives its
own: Python str in, Python objects out (a family may give `encode`, `decode` or `decode_bytes` whole,
one call to its encoder, where the Python frames between would cost a short text more than its work).
"""
from __future__ import annotations

import operator
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex

from sqltok.errors import SqltokError, UnknownTokenError, ids_error, token_id_error
from sqltok.formats.errors import UnsupportedTokenizerError
from sqltok.formats.json_file import load_json
from sqltok.formats.kind import KINDS, TokenizerFile, sniff
from sqltok.native._id_lists import id_lists
from sqltok.native.list_views import as_large_list
from sqltok.token_offsets import EncodedText

AllowedSpecial = Literal["all"] | Collection[str]

#: encode_batch of fewer texts takes the direct path: the Arrow path would run them on one thread too
#: (`parallel_rows.row_threads`: a thread per 64 rows).
DIRECT_TEXTS = 64


class Tokenizer(ABC):
    """A loaded tokenizer of any family; `Tokenizer.load(path)` reads any file sqltok knows."""

    #: The kinds of file (`sqltok.formats.kind.KINDS`) this family reads.
    file_kinds: ClassVar[tuple[str, ...]] = ()
    #: Surrogates in a str: an error, or (True) what tiktoken makes of them (see `text_array`).
    fixes_surrogates: ClassVar[bool] = False
    #: Whether decoding leaves special tokens out unless told otherwise (HF's `skip_special_tokens`
    #: default, for the families that follow HF's decoders; tiktoken never skips).
    skips_special_tokens: ClassVar[bool] = False
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
        self._ids_by_bytes: dict[bytes, int] | None = None
        self._sorted_tokens: tuple[list[bytes], list[int]] | None = None
        self._lookups: tuple[dict[str, int], dict[str, int], dict[int, str], dict[int, str]] | None = None
        #: How pickle rebuilds this tokenizer: (callable, args) from its source, set by the family.
        self._pickle_as: tuple[Callable[..., Tokenizer], tuple] | None = None
        self._special_patterns: dict[object, regex.Pattern | None] = {}
        self._disallowed: dict[tuple, tuple[str, ...]] = {}
        self._token_list: list[str | None] | None = None
        self._id_objects: list[int] | None = None  # the int of each id, shared by the lists it returns

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
    def from_stored(cls, kind: str, content: bytes, name: str) -> Tokenizer:
        """The tokenizer of a model kept in a database as a file of `kind` (see `store.ModelFile`)."""
        family = Tokenizer._families.get(kind)
        if family is None:
            raise UnsupportedTokenizerError(f"model {name!r} is kept as {KINDS.get(kind, kind)}, which this "
                                            "sqltok does not read")
        label = Path(f"<model {name}>")
        document = load_json(label, content) if kind.startswith("hf-") else None
        return family.from_file(TokenizerFile(label, kind, document, content=content), name)

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
    def decode_arrow(self, ids: pa.Array, errors: str = "replace",
                     skip_special_tokens: bool | None = None) -> pa.Array:
        """Texts (large_string) of a list<integer> array; special tokens left out when
        `skip_special_tokens` (None: the family's default, `skips_special_tokens`)."""

    @abstractmethod
    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id (special tokens too); `UnknownTokenError` (a KeyError, as
        tiktoken raises, and a ValueError) for an id without a token."""

    @abstractmethod
    def vocabularies(self) -> tuple[dict[str, int], dict[str, int]]:
        """(model vocabulary, added tokens) as HF `tokenizers` holds them, token string -> id: what
        `get_vocab`, `token_to_id` and the other HF lookups read."""

    @abstractmethod
    def encode_with_offsets(self, text: str) -> EncodedText:
        """`encode(text)` with each token's (start, end) character offsets into `text`, as HF
        `tokenizers` gives them (`Tokenizer.encode(text).offsets`); special-token text is text."""

    def decode_bytes_arrow(self, ids: pa.Array) -> pa.Array:
        """Bytes (large_binary) of a list<integer> array: the UTF-8 of `decode_arrow`."""
        return self.decode_arrow(ids).cast(pa.large_binary())

    # -- special tokens ----------------------------------------------------------------------------
    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def _allowed_ids(self, allowed_special: AllowedSpecial) -> set[int] | str | None:
        """"all", the ids of the allowed special tokens, or None when none is allowed. A name that is
        no special token of this tokenizer allows nothing, as in tiktoken (one set can serve several
        encodings); a str other than "all" is a TypeError, as tiktoken's (not a set of its characters)."""
        if not allowed_special:
            return None
        if allowed_special == "all":
            return "all"
        _require_set(allowed_special)
        return {self._special_tokens[s] for s in allowed_special if s in self._special_tokens} or None

    def _special_pattern(self, allowed) -> regex.Pattern | None:
        """The allowed special tokens' texts as one pattern, longest first (built once per set);
        None when none is allowed."""
        key = None if allowed is None else allowed if allowed == "all" else frozenset(allowed)
        if key not in self._special_patterns:
            names = [] if key is None else [s for s, i in self._special_tokens.items() if key == "all" or i in key]
            self._special_patterns[key] = regex.compile(
                "|".join(regex.escape(s) for s in sorted(names, key=len, reverse=True))) if names else None
        return self._special_patterns[key]

    def _split_specials(self, text: str, allowed) -> Iterable[tuple[str, int | None]]:
        """`text` as (segment, None) and ("", special id) pieces, longest special token first."""
        pat = self._special_pattern(allowed)
        if pat is None:
            yield text, None
            return
        start = 0
        for m in pat.finditer(text):
            yield text[start:m.start()], None
            yield "", self._special_tokens[m.group()]
            start = m.end()
        yield text[start:], None

    def _rows_with_specials(self, texts: pa.Array, ids: pa.Array, allowed,
                            encode_one: Callable[[str], list[int]]) -> pa.Array:
        """`ids` (of `texts`, special-token text encoded as text) with each row that holds an allowed
        special token's text encoded again by `encode_one` (see `_split_encode`); the other rows keep
        their ids as they are."""
        names = [s for s, i in self._special_tokens.items() if allowed == "all" or i in allowed]
        hit = pc.match_substring_regex(texts, "|".join(re.escape(s) for s in names)).fill_null(False)
        if not pc.any(hit).as_py():
            return ids
        fixed = [encode_one(texts[r].as_py()) for r in pc.indices_nonzero(hit).to_pylist()]
        # row r is taken from `ids`, or from `fixed` (appended after them) when it held special text
        order = pc.replace_with_mask(pa.array(range(len(ids)), pa.int64()), hit,
                                     pa.array(range(len(ids), len(ids) + len(fixed)), pa.int64()))
        return pa.concat_arrays([ids, pa.array(fixed, pa.large_list(pa.int32()))]).take(order)

    def _split_encode(self, text: str, allowed, encode_parts: Callable[[list[str]], list[list[int]]],
                      before: Sequence[int] = (), after: Sequence[int] = ()) -> list[int]:
        """Ids of one text whose allowed special tokens are matched: the text between them encoded
        piece by piece by `encode_parts`, each special token as its id, `before` and `after` around
        the whole (a post-processor's template)."""
        parts = list(self._split_specials(text, allowed))
        pieces = encode_parts([p for p, _ in parts])
        return [*before, *(x for (_, special), got in zip(parts, pieces)
                           for x in ([special] if special is not None else got)), *after]

    def _check_disallowed(self, texts: list[str], allowed_special, disallowed_special) -> None:
        """tiktoken's check: ValueError when a disallowed special token's text appears (none when
        `disallowed_special` is empty, None included, as tiktoken's `if disallowed_special:`)."""
        if not disallowed_special:
            return
        disallowed = self._disallowed_texts(allowed_special, disallowed_special)
        for text in texts:
            for s in disallowed:
                if s in text:
                    raise _disallowed_error(s)

    def _disallowed_texts(self, allowed_special, disallowed_special) -> tuple[str, ...]:
        """The texts `_check_disallowed` looks for under a policy, kept per policy when it is
        hashable (the defaults are: a single `encode` then costs a lookup and a few `in`)."""
        try:
            return self._disallowed[allowed_special, disallowed_special]
        except KeyError:
            pass
        except TypeError:  # a set: not kept
            return self._find_disallowed(allowed_special, disallowed_special)
        found = self._disallowed[allowed_special, disallowed_special] = \
            self._find_disallowed(allowed_special, disallowed_special)
        return found

    def _find_disallowed(self, allowed_special, disallowed_special) -> tuple[str, ...]:
        if disallowed_special == "all":
            if allowed_special == "all":
                return ()
            _require_set(allowed_special)
            return tuple(s for s in self._special_tokens if s not in allowed_special)
        return tuple(set(disallowed_special))

    # -- Arrow helpers -----------------------------------------------------------------------------
    def tokens_arrow(self, texts: pa.Array) -> pa.Array:
        """Each row's tokens as strings (list<large_string>), taken from `token_strings()`."""
        return self._tokens_from(texts, self.token_strings())

    def token_bytes_arrow(self, texts: pa.Array) -> pa.Array:
        """Each row's tokens as bytes (list<large_binary>), taken from `token_bytes_array()`: what
        `tokens_arrow` shows as U+FFFD (a byte-level piece of a character) stays exact here."""
        return self._tokens_from(texts, self.token_bytes_array())

    def _tokens_from(self, texts: pa.Array, table: pa.Array) -> pa.Array:
        """Each row's ids as the entries of `table` (one per id)."""
        ids = self.encode_arrow(texts)
        first = ids.offsets[0].as_py()
        return pa.LargeListArray.from_arrays(pc.subtract(ids.offsets, first), table.take(ids.values),
                                             mask=ids.is_null() if ids.null_count else None)

    def token_bytes_array(self) -> pa.Array:
        """Every token's bytes by id (large_binary), built once; ids without a token are NULL."""
        if self._token_bytes is None:
            tokens = []
            for t in range(self.n_vocab):
                try:
                    tokens.append(self.decode_single_token_bytes(t))
                except UnknownTokenError:
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
        """The ids of every text (an array from `_text_array`) as Python lists, each id one shared int."""
        return id_lists(self.encode_arrow(texts, allowed_special, threads), self._int_objects())

    def _int_objects(self) -> list[int]:
        """The int of each id, made once: the lists this tokenizer returns share them."""
        if self._id_objects is None:
            self._id_objects = list(range(self.n_vocab))
        return self._id_objects

    def _text_array(self, texts: Sequence[str]) -> pa.Array:
        """Python strings as the family's encoder takes them (see `text_array`)."""
        return text_array(texts, self.fixes_surrogates)

    # -- the direct path: Python objects in and out (a family gives its own, without Arrow) ----------
    def _encode_texts(self, texts: list[str], allowed_special: AllowedSpecial, counts_only: bool = False) -> list:
        """Ids (lists) or token counts of a few str on this thread."""
        arr = self._text_array(texts)
        if counts_only:
            return self.encode_arrow(arr, allowed_special, 1, counts_only=True).to_pylist()
        return self._encode_lists(arr, allowed_special, 1)

    def _encode_text(self, text: str, allowed_special: AllowedSpecial, counts_only: bool = False) -> list[int] | int:
        """Ids or token count of one str."""
        return self._encode_texts([text], allowed_special, counts_only)[0]

    def _decode_ids(self, ids: Sequence[int], skip_special_tokens: bool | None = None) -> bytes:
        """The bytes of one sequence of ids."""
        return self.decode_arrow(id_array(ids), skip_special_tokens=skip_special_tokens)[0].as_py().encode()

    def _skips(self, skip_special_tokens: bool | None) -> bool:
        """Whether a decode call leaves special tokens out (None: the family's default)."""
        return self.skips_special_tokens if skip_special_tokens is None else bool(skip_special_tokens)

    def _without_special_ids(self, ids: pa.Array) -> pa.Array:
        """A list<integer> array with the special tokens' ids taken out of each row (NULL stays NULL)."""
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        ids = as_large_list(ids, pa.int64())
        values = ids.values[ids.offsets[0].as_py():ids.offsets[-1].as_py()]
        kept = pc.invert(pc.is_in(values, value_set=pa.array(sorted(self._special_by_id), pa.int64())))
        upto = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(kept.cast(pa.int64()))])
        offsets = upto.take(pc.subtract(ids.offsets, ids.offsets[0]))
        return pa.LargeListArray.from_arrays(offsets, values.filter(kept), mask=ids.is_null())

    def _utf8_texts(self, texts: list[str]) -> list[str]:
        """`texts` with what UTF-8 cannot hold (surrogates) fixed as `text_array` does, or its error."""
        return [_utf8_text(t, self.fixes_surrogates) for t in texts]

    # -- tiktoken-style Python API -----------------------------------------------------------------
    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: AllowedSpecial = "all") -> list[int]:
        """Token ids of `text`; special tokens as tiktoken: matched only when allowed, an error when a
        disallowed one appears."""
        text = text if type(text) is str else exact_str(text)
        if disallowed_special:
            for s in self._disallowed_texts(allowed_special, disallowed_special):
                if s in text:
                    raise _disallowed_error(s)
        return self._encode_text(text, allowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text encoded as ordinary text."""
        text = text if type(text) is str else exact_str(text)
        return self._encode_text(text, ())

    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None,
                     allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: AllowedSpecial = "all") -> list[list[int]]:
        """`encode` of every text, on `num_threads` threads (default: up to 2)."""
        texts = require_str(texts)
        if disallowed_special:
            self._check_disallowed(texts, allowed_special, disallowed_special)
        if len(texts) < DIRECT_TEXTS:
            return self._encode_texts(texts, allowed_special)
        return self._encode_lists(arrow_texts(texts, self.fixes_surrogates), allowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ordinary` of every text."""
        texts = require_str(texts)
        if len(texts) < DIRECT_TEXTS:
            return self._encode_texts(texts, ())
        return self._encode_lists(arrow_texts(texts, self.fixes_surrogates), (), num_threads)

    def token_count(self, text: str) -> int:
        """How many tokens `encode_ordinary(text)` gives."""
        text = text if type(text) is str else exact_str(text)
        return self._encode_text(text, (), True)

    def tokens(self, text: str) -> list[str | None]:
        """The tokens of `encode_ordinary(text)` as strings, as SQL's `tokens` shows them."""
        if self._token_list is None:
            self._token_list = self.token_strings().to_pylist()
        strings = self._token_list
        return [strings[t] for t in self.encode_ordinary(text)]

    def decode(self, ids: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool | None = None) -> str:
        """The text of `ids`; bytes that are not UTF-8 become U+FFFD unless errors="strict"; special
        tokens left out when `skip_special_tokens` (None: the family's default, `skips_special_tokens`)."""
        return self._decode_ids(ids, skip_special_tokens).decode("utf-8", errors)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of `ids`."""
        return self._decode_ids(ids)

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """The bytes of each id."""
        return [self.decode_single_token_bytes(t) for t in ids]

    # -- tiktoken's Encoding API beyond encode and decode ------------------------------------------
    @property
    def max_token_value(self) -> int:
        """The largest token id (special tokens included)."""
        return self.n_vocab - 1

    @property
    def eot_token(self) -> int:
        """The id of "<|endoftext|>"; KeyError when the tokenizer has none, as tiktoken."""
        return self._special_tokens["<|endoftext|>"]

    def is_special_token(self, token: int) -> bool:
        """Whether `token` is the id of a special token."""
        if not isinstance(token, int):
            raise TypeError(f"token must be an int, not {type(token).__name__}")
        return token in self._special_by_id

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose bytes are `text_or_bytes` (special tokens too); KeyError
        (`UnknownTokenError`) when no token has them, TypeError for anything but str or bytes."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8", "surrogatepass")
        if not isinstance(text_or_bytes, bytes):
            raise TypeError(f"expected str or bytes, not {type(text_or_bytes).__name__}")
        if self._ids_by_bytes is None:
            ids: dict[bytes, int] = {}
            for t, b in enumerate(self.token_bytes_array().to_pylist()):
                if b is not None and t not in self._special_by_id:
                    ids.setdefault(b, t)
            for s, t in self._special_tokens.items():
                ids.setdefault(s.encode(), t)
            self._ids_by_bytes = ids
        try:
            return self._ids_by_bytes[text_or_bytes]
        except KeyError:
            raise UnknownTokenError(f"no token has the bytes {text_or_bytes!r}") from None

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every token that is not special, sorted (tiktoken's order)."""
        return list(self.sorted_tokens()[0])

    def sorted_tokens(self) -> tuple[list[bytes], list[int]]:
        """The bytes of every token that is not special, sorted, and the id of each (built once;
        the tokens that start with some bytes are one slice of it)."""
        if self._sorted_tokens is None:
            pairs = sorted((b, t) for t, b in enumerate(self.token_bytes_array().to_pylist())
                           if b is not None and t not in self._special_by_id)
            self._sorted_tokens = ([b for b, _ in pairs], [t for _, t in pairs])
        return self._sorted_tokens

    def encode_to_numpy(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
                        disallowed_special: AllowedSpecial = "all") -> np.ndarray:
        """`encode(text)` as a read-only uint32 array over the encoder's own buffer (no list)."""
        texts = require_str([text])
        self._check_disallowed(texts, allowed_special, disallowed_special)
        ids = self.encode_arrow(arrow_texts(texts, self.fixes_surrogates), allowed_special, 1).flatten()
        return ids.to_numpy(zero_copy_only=True).view(np.uint32)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int | None = None, skip_special_tokens: bool | None = None) -> list[str]:
        """`decode` of every id list, in one pass over Arrow (`num_threads` is tiktoken's argument;
        decoding is a copy of bytes and needs no threads)."""
        return self._decode_rows(batch, lambda ids: self.decode_arrow(ids, errors, skip_special_tokens)).to_pylist()

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int | None = None) -> list[bytes]:
        """`decode_bytes` of every id list, in one pass over Arrow."""
        return self._decode_rows(batch, self.decode_bytes_arrow).to_pylist()

    def _decode_rows(self, batch: Sequence[Sequence[int]], decode: Callable[[pa.Array], pa.Array]) -> pa.Array:
        """`decode` of the id lists of `batch`, all in one pass; when that fails, the error of the first
        row that fails on its own (what `decode_bytes` of it raises), as tiktoken decodes row by row."""
        if isinstance(batch, (str, bytes)):
            raise TypeError(f"expected a list of id lists, not {type(batch).__name__}")
        rows = list(batch)
        try:
            return decode(id_lists_array(rows))
        except (TypeError, OverflowError, KeyError):
            for row in rows:  # (only when failing)
                self.decode_bytes(row)
            raise

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of `tokens` and the character index where each token starts in it (tiktoken's
        definition: a token that starts inside a character starts at that character); the text
        must be valid UTF-8 (UnicodeDecodeError otherwise, as tiktoken)."""
        pieces = self.decode_tokens_bytes(tokens)
        offsets, chars = [], 0
        for piece in pieces:
            offsets.append(max(0, chars - (0x80 <= piece[0] < 0xC0)) if piece else chars)
            chars += sum(1 for c in piece if not 0x80 <= c < 0xC0)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    # -- HF tokenizers' vocabulary lookups ---------------------------------------------------------
    def _lookup_tables(self) -> tuple[dict[str, int], dict[str, int], dict[int, str], dict[int, str]]:
        if self._lookups is None:
            model, added = self.vocabularies()
            self._lookups = (model, added, {i: t for t, i in model.items()}, {i: t for t, i in added.items()})
        return self._lookups

    def token_to_id(self, token: str) -> int | None:
        """The id of a token string (added tokens first, as HF), or None; TypeError for anything but
        a str, as HF's."""
        if not isinstance(token, str):
            raise TypeError(f"token must be a str, not {type(token).__name__}")
        model, added, _, _ = self._lookup_tables()
        return added.get(token, model.get(token))

    def id_to_token(self, id: int) -> str | None:
        """The token string of an id (added tokens first, as HF), or None; as HF's, TypeError for
        anything but an integer (5.0 is no id) and OverflowError for one no u32 holds."""
        id = operator.index(id)
        if not 0 <= id < 2**32:
            raise OverflowError(f"token id {id} is out of range (ids are unsigned 32-bit integers)")
        _, _, model, added = self._lookup_tables()
        return added.get(id, model.get(id))

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """Token string -> id, the added tokens included unless `with_added_tokens` is false."""
        model, added, _, _ = self._lookup_tables()
        return {**model, **added} if with_added_tokens else dict(model)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """How many entries `get_vocab(with_added_tokens)` has, as HF counts them."""
        model, added, _, _ = self._lookup_tables()
        return len(model) + (sum(t not in model for t in added) if with_added_tokens else 0)

    # -- pickling ----------------------------------------------------------------------------------
    def __reduce__(self):
        """Pickled as its source (a file path with its content's digest, a spec or a model), never
        its C state: the copy is rebuilt from it and gives the same ids."""
        if self._pickle_as is None:
            raise TypeError(f"{type(self).__name__} {self.name!r} was built from an encoder directly and does not "
                            "know its source; build it with Tokenizer.load, from_spec or from_model to pickle it")
        return self._pickle_as

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} n_vocab={self.n_vocab}>"


def id_lists_array(rows: list[Sequence[int]]) -> pa.Array:
    """Rows of token ids (large_list of the integers as read: int64 for Python ints, which the
    decoders read without a cast); TypeError for an id that is not an integer, as tiktoken. An id
    that no vocabulary has is the decoders' to report (`token_id_error`)."""
    try:  # inferred, not cast: a cast to integers would truncate 2.5 to 2
        lists = pa.array(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        lists = None
    if lists is None or not (pa.types.is_list(lists.type) and pa.types.is_integer(lists.type.value_type)) \
            or lists.null_count or pc.list_flatten(lists).null_count:  # (None is no row, nor an id)
        return pa.array([[operator.index(i) for i in row] for row in rows], pa.large_list(pa.int64()))
    return lists.cast(pa.large_list(lists.type.value_type))


def require_str(texts: Sequence[str]) -> list[str]:
    """`texts` as a list of str (subclasses' copied, see `exact_str`), TypeError naming the first that
    is not a str (tiktoken takes str only)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"expected a list of str, not {type(texts).__name__}")
    texts = list(texts)
    for i, t in enumerate(texts):
        if type(t) is not str:
            if not isinstance(t, str):
                raise TypeError(f"text {i} is {type(t).__name__}, not str" if len(texts) > 1 else
                                f"text must be str, not {type(t).__name__}")
            texts[i] = str.__str__(t)
    return texts


def exact_str(text: str) -> str:
    """`text` as an exact str: a subclass's (numpy.str_) copied, since the encoders take
    exactly str; TypeError for anything that is not a str (tiktoken takes str only)."""
    if type(text) is str:
        return text
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return str.__str__(text)


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
            raise _not_unicode(e) from None
    return pa.array([_utf8_text(t, True) for t in texts], pa.large_string())


def _utf8_text(text: str, fix_surrogates: bool) -> str:
    """`text` itself when UTF-8 can hold it; else (surrogates) an error, or with `fix_surrogates`
    what tiktoken makes of them: a pair the character it encodes, a lone one U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError as e:
        if not fix_surrogates:
            raise _not_unicode(e) from None
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _require_set(allowed_special) -> None:
    """TypeError for a str other than "all" as `allowed_special`, as tiktoken's (not a set of its
    characters, nor a substring test)."""
    if isinstance(allowed_special, str):
        raise TypeError(f'allowed_special must be "all" or a set of special tokens, not {allowed_special!r}')


def _disallowed_error(special: str) -> ValueError:
    """tiktoken's error for the text of a disallowed special token."""
    return ValueError(f"Encountered text corresponding to disallowed special token {special!r}.\n"
                      f"Pass allowed_special={{{special!r}, ...}} (or 'all') to encode it as a special token, "
                      "or disallowed_special=() to encode it as normal text.")


def _not_unicode(e: Exception) -> SqltokError:
    return SqltokError(f"text is not valid Unicode (a lone surrogate?): {e}")


def id_array(ids: Sequence[int]) -> pa.Array:
    """One row of token ids (large_list<int32>); as tiktoken, TypeError for a set or mapping and for
    anything that is not an integer, `ids_error` for an id no int32 holds. A short sequence is
    checked id by id (cheaper than Arrow's setup, 3.6 against 9 us for 15 ids); a long one converts
    in C when it is all integers (6,000 ids: 0.15 against 0.23 ms a decode) and is only looked at id
    by id when it is not."""
    if isinstance(ids, (Set, Mapping)):  # (as tiktoken: their order is not the ids')
        raise TypeError(f"token ids must be a sequence of integers, not {type(ids).__name__}")
    if len(ids) < 64:
        ids = _int_ids(ids)
        try:
            return pa.array([ids], pa.large_list(pa.int32()))
        except (pa.ArrowInvalid, OverflowError):
            raise ids_error(ids) from None
    try:
        values = pa.array(ids)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        values = None
    if values is None or not pa.types.is_integer(values.type):
        values = pa.array(_int_ids(ids), pa.int64())
    try:
        values = values.cast(pa.int32())
    except pa.ArrowInvalid:
        raise ids_error(values.to_pylist()) from None
    return pa.LargeListArray.from_arrays(pa.array([0, len(values)], pa.int64()), values)


def _int_ids(ids: Iterable) -> list[int]:
    """`ids` as ints (`operator.index`: TypeError for an item that is no integer), raising what
    tiktoken's conversion raises first: OverflowError for an id no u32 holds before such an item."""
    try:
        return [operator.index(i) for i in ids]
    except TypeError:
        for i in ids:
            if not 0 <= operator.index(i) < 2**32:
                raise token_id_error(operator.index(i)) from None
        raise
