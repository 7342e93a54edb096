"""`Tokenizer`: encode, decode and count with any byte-level BPE tokenizer, tiktoken-style API.

Loads tiktoken files, HF `tokenizer.json` (byte-level BPE), reference `.model` files and models
trained by sqltok; the work happens in the Cython `Encoder` over Arrow arrays with the GIL released.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Collection, Iterable, Literal, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from sqltok.bpe._candidates import candidates_arrow
from sqltok.bpe._encode import Encoder
from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pattern_id
from sqltok.errors import SqltokError
from sqltok.wordpiece.files import is_wordpiece_json
from sqltok.bpe.model import BYTE_ALPHABET, Model
from sqltok.bpe.settings import MAIN_PATTERN

AllowedSpecial = Literal["all"] | Collection[str]

#: Pattern id meaning "each piece is already one pretoken" (used after a Python `regex` split).
PAT_NONE = -1


def _default_threads() -> int:
    """Threads per encoding call: $SQLTOK_THREADS, else the CPUs this process may run on, up to 2
    (the SQL functions use it too, whatever DuckDB's own `threads` setting)."""
    env = os.environ.get("SQLTOK_THREADS")
    if env:
        return max(1, int(env))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(2, cpus or 1))


class Tokenizer:
    """A loaded tokenizer. Build one with `Tokenizer.load(path)`, `Tokenizer.from_model(model)` or
    `Tokenizer.from_db(con, name)`."""

    def __init__(self, name: str, encoder: Encoder, special_tokens: dict[str, int],
                 pattern: str, normalizer: str | None = None) -> None:
        self.name = name
        self._encoder = encoder
        self._special_tokens = dict(special_tokens)
        self._special_by_id = {i: s for s, i in special_tokens.items()}
        self.pattern = pattern
        self.normalizer = normalizer
        self._fallback = None
        self._letters: bytes | None = None
        self._token_strings: pa.Array | None = None
        if pattern_id(pattern) is None:  # an unknown pattern: split in Python, merge in Cython
            import regex

            self._fallback = regex.compile(pattern)

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike, name: str | None = None, pattern: str | None = None) -> "Tokenizer":
        """Load a `.tiktoken` file (standard ones are recognized by their sha256; give `pattern`
        otherwise), an HF `tokenizer.json`, a reference `.model` file, or a WordPiece `vocab.txt`
        (a WordPiece tokenizer.json or vocab.txt gives a `WordPieceTokenizer`)."""
        p = Path(path)
        if not p.exists():
            raise SqltokError(f"no such tokenizer file: {p}")
        name = name or p.stem
        if p.suffix == ".txt" or (p.suffix == ".json" and is_wordpiece_json(p)):
            from sqltok.wordpiece.tokenizer import WordPieceTokenizer

            return WordPieceTokenizer.load(p, name)
        if p.suffix == ".model":
            from sqltok.bpe.reference_file import read_reference

            return cls.from_model(read_reference(p), name)
        if p.suffix == ".json":
            from sqltok.bpe.hf_read import read_hf

            return cls.from_spec(read_hf(p, name=name), name)
        from sqltok.bpe.tiktoken_file import read_tiktoken

        return cls.from_spec(read_tiktoken(p, pattern=pattern, name=name), name)

    @classmethod
    def from_spec(cls, spec, name: str | None = None) -> "Tokenizer":
        """From an `EncoderSpec` (tiktoken or HF)."""
        pid = pattern_id(spec.pattern)
        enc = Encoder(spec.tokens, spec.pairs, spec.byte_ids, spec.direct, PAT_NONE if pid is None else pid,
                      rank_guard=False, special_tokens=spec.special_tokens,
                      always_tokens=getattr(spec, "added_tokens", None) or {})
        return cls(name or spec.name, enc, spec.special_tokens, spec.pattern, spec.normalizer)

    @classmethod
    def from_model(cls, model: Model, name: str) -> "Tokenizer":
        """From a reference-format model (trained by sqltok or read from a `.model` file): BPE, or a
        two-phase BoundlessBPE/SuperBPE model whose supermerges apply after the regular merges."""
        ids = {t: i for i, t in enumerate(model.tokens)}
        pairs = [(m.left, m.right, rank, ids[model.tokens[m.left] + model.tokens[m.right]])
                 for rank, m in enumerate(model.merges)]
        supers = [(m.left, m.right, rank, ids[model.tokens[m.left] + model.tokens[m.right]])
                  for rank, m in enumerate(model.supermerges)]
        byte_ids = [-1] * 256
        for i, b in enumerate(BYTE_ALPHABET):
            byte_ids[b] = i
        if model.script_aware:
            pid, pattern = PATTERN_IDS["script_aware"], model.settings["main_regex"]
        else:
            pattern = model.settings["main_regex"]
            pid = pattern_id(pattern)
        if pattern != MAIN_PATTERN and pid is None:
            raise SqltokError(f"model {name!r}: unsupported pre-tokenization pattern {pattern!r}")
        enc = Encoder(model.tokens, pairs, byte_ids, False, pid, rank_guard=True,
                      special_tokens=model.special_tokens, supermerges=supers)
        return cls(name, enc, model.special_tokens, pattern)

    @classmethod
    def from_db(cls, con, name: str) -> "Tokenizer":
        """A model stored in a DuckDB database by sqltok."""
        from sqltok.store import load_model

        return cls.from_model(load_model(con, name), name)

    # -- properties --------------------------------------------------------------------------------
    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (special tokens included)."""
        return self._encoder.n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    # -- Arrow (what the SQL functions call) -------------------------------------------------------
    def _allowed_ids(self, allowed_special: AllowedSpecial) -> set[int] | str | None:
        if allowed_special == "all":
            return "all"
        unknown = set(allowed_special) - self.special_tokens_set
        if unknown:
            raise SqltokError(f"not special tokens of {self.name!r}: {sorted(unknown)}")
        return {self._special_tokens[s] for s in allowed_special} or None

    def _prepare(self, texts: pa.Array) -> pa.Array:
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if self.normalizer == "NFC":
            texts = pc.utf8_normalize(texts, form="NFC")
        return texts

    def encode_arrow(self, texts: pa.Array, allowed_special: AllowedSpecial = (), threads: int | None = None,
                     counts_only: bool = False) -> pa.Array:
        """Ids (list<int32>) or token counts (int64) of a string array; NULL stays NULL."""
        texts = self._prepare(texts)
        allowed = self._allowed_ids(allowed_special)
        threads = threads or _default_threads()
        if self._fallback is None:
            return self._encoder.encode_arrow(texts, allowed, threads, counts_only)
        return self._encode_fallback(texts, allowed, threads, counts_only)

    def _encode_lists(self, texts: Sequence[str], allowed_special: AllowedSpecial,
                      threads: int | None) -> list[list[int]]:
        arr = self._prepare(pa.array(texts, pa.large_string()))
        allowed = self._allowed_ids(allowed_special)
        threads = threads or _default_threads()
        if self._fallback is None:
            return self._encoder.encode_arrow(arr, allowed, threads, as_lists=True)
        return self._encode_fallback(arr, allowed, threads, False).to_pylist()

    def _encode_fallback(self, texts: pa.Array, allowed, threads: int, counts_only: bool) -> pa.Array:
        """Unknown pattern: pretokens from Python `regex`, merged in Cython (slow but exact)."""
        rows = texts.to_pylist()
        pieces, owners = [], []
        for r, text in enumerate(rows):
            if text is None:
                continue
            for segment, special in self._split_specials(text, allowed):
                if special is not None:
                    pieces.append(None)
                    owners.append((r, special))
                else:
                    for piece in self._fallback.findall(segment):
                        pieces.append(piece)
                        owners.append((r, None))
        encoded = self._encoder.encode_arrow(pa.array([p or "" for p in pieces], pa.large_string()), None, threads)
        out: list = [None if t is None else [] for t in rows]
        for (r, special), ids in zip(owners, encoded.to_pylist()):
            out[r].extend([special] if special is not None else ids)
        if counts_only:
            return pa.array([None if x is None else len(x) for x in out], pa.int64())
        return pa.array(out, pa.large_list(pa.int32()))

    def _split_specials(self, text: str, allowed) -> Iterable[tuple[str, int | None]]:
        names = [] if allowed is None else [s for s, i in self._special_tokens.items()
                                            if allowed == "all" or i in allowed]
        if not names:
            yield text, None
            return
        import regex

        pat = regex.compile("|".join(regex.escape(s) for s in sorted(names, key=len, reverse=True)))
        start = 0
        for m in pat.finditer(text):
            yield text[start:m.start()], None
            yield "", self._special_tokens[m.group()]
            start = m.end()
        yield text[start:], None

    def decode_arrow(self, ids: pa.Array, errors: str = "replace") -> pa.Array:
        """Texts (large_string) of a list<integer> array; invalid UTF-8 is replaced by U+FFFD
        (errors="replace") or raises (errors="strict")."""
        return _to_text(self._encoder.decode_arrow(ids), errors)

    def tokens_arrow(self, texts: pa.Array) -> pa.Array:
        """Each row's tokens as strings (bytes that are not UTF-8 on their own become U+FFFD): the
        ids taken from one array of every token's text."""
        ids = self.encode_arrow(texts)
        first = ids.offsets[0].as_py()
        return pa.LargeListArray.from_arrays(pc.subtract(ids.offsets, first), self.token_strings().take(ids.values),
                                             mask=ids.is_null() if ids.null_count else None)

    def token_strings(self) -> pa.Array:
        """Every token's text by id (large_string), built once; bytes that are not UTF-8 on their
        own become U+FFFD, ids without a token are NULL."""
        if self._token_strings is None:
            texts = []
            for t in range(self.n_vocab):
                try:
                    texts.append(self._encoder.token_bytes(t).decode("utf-8", "replace"))
                except ValueError:
                    texts.append(None)
            self._token_strings = pa.array(texts, pa.large_string())
        return self._token_strings

    def candidates_arrow(self, texts: pa.Array, threads: int | None = None) -> pa.Array:
        """The supermerge candidates of each text as lists of token ids (list<list<int32>>): maximal
        runs of two or more pretokens that this (phase-1) model encodes to exactly one token holding a
        letter (`\\p{L}`)."""
        return candidates_arrow(self._encoder, self._prepare(texts), self.letter_mask(), threads or _default_threads())

    def letter_mask(self) -> bytes:
        """1 for each token id whose bytes are UTF-8 text holding a letter (`\\p{L}`), else 0."""
        if self._letters is None:
            self._letters = _letter_tokens(self._encoder, set(self._special_by_id))
        return self._letters

    # -- tiktoken-style Python API -----------------------------------------------------------------
    def _check_disallowed(self, texts: Sequence[str], allowed_special, disallowed_special) -> None:
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

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: AllowedSpecial = "all") -> list[int]:
        """Token ids of `text`; special tokens as tiktoken: matched only when allowed, an error when a
        disallowed one appears."""
        return self.encode_batch([text], allowed_special=allowed_special,
                                 disallowed_special=disallowed_special, num_threads=1)[0]

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of `text`, special-token text encoded as ordinary text."""
        return self._encode_lists([text], (), 1)[0]

    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None,
                     allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: AllowedSpecial = "all") -> list[list[int]]:
        """`encode` of every text, on `num_threads` threads (default: up to 2)."""
        self._check_disallowed(texts, allowed_special, disallowed_special)
        return self._encode_lists(texts, allowed_special, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        return self._encode_lists(texts, (), num_threads)

    def token_count(self, text: str) -> int:
        """How many tokens `encode_ordinary(text)` gives."""
        return self.encode_arrow(pa.array([text], pa.large_string()), (), 1, counts_only=True)[0].as_py()

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self._encoder.decode_arrow(pa.array([list(ids)], pa.large_list(pa.int32())))[0].as_py()

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """The text of `ids`; bytes that are not UTF-8 become U+FFFD unless errors="strict"."""
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._encoder.token_bytes(token)

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        return [self._encoder.token_bytes(t) for t in ids]

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab}>"


def _letter_tokens(encoder: Encoder, special_ids: set[int]) -> bytes:
    """1 for each token id whose bytes are UTF-8 text holding a letter, else 0."""
    import regex

    letter = regex.compile(r"\p{L}")
    mask = bytearray(encoder.n_vocab)
    for t in range(encoder.n_vocab):
        if t in special_ids:
            continue
        try:
            text = encoder.token_bytes(t).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        mask[t] = letter.search(text) is not None
    return bytes(mask)


def _to_text(data: pa.Array, errors: str) -> pa.Array:
    """large_binary -> large_string, validating UTF-8; invalid rows replaced (U+FFFD) or an error."""
    try:
        return data.cast(pa.large_string())
    except pa.ArrowInvalid:
        if errors == "strict":
            raise ValueError("the token ids do not decode to valid UTF-8") from None
        return pa.array([None if b is None else b.decode("utf-8", errors) for b in data.to_pylist()],
                        pa.large_string())
