"""`BPETokenizer`: byte-level BPE tokenizers (tiktoken files, HF `tokenizer.json` byte-level BPE,
GPT-2's vocab.json + merges.txt, reference `.model` files, Mistral's Tekken JSON, models trained by
sqltok); the work happens in the Cython `Encoder`, over Arrow arrays with the GIL released, or straight
from a Python str for single texts and short lists (the direct path).
"""
from __future__ import annotations

import hashlib
import operator
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex

from sqltok.bpe._encode import Encoder
from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.bpe.hf_read import read_hf, read_hf_vocab_merges
from sqltok.bpe.byte_unicode import bytes_to_unicode_str
from sqltok.bpe.model import BYTE_ALPHABET, Model
from sqltok.bpe.reference_file import read_reference
from sqltok.bpe.tekken_file import read_tekken
from sqltok.bpe.tiktoken_file import read_encoding_document, read_tiktoken
from sqltok.bpe.unstable import unstable_completions
from sqltok.errors import SqltokError
from sqltok.formats.files import read_bytes
from sqltok.formats.kind import TokenizerFile, sniff
from sqltok.normalizers import normalize
from sqltok.normalizers._normalize import normalize_arrow
from sqltok.normalizers.alignment import nfc_origin
from sqltok.pretokenizer import patterns
from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pattern_id, pretokenize
from sqltok.store import load_model
from sqltok.threads import default_threads
from sqltok.token_offsets import EncodedText, byte_range_offsets, byte_span_offsets, require_unicode
from sqltok.tokenizer import AllowedSpecial, Tokenizer, require_str

#: Pattern id meaning "each piece is already one pretoken" (used after a Python `regex` split).
PAT_NONE = -1


class BPETokenizer(Tokenizer):
    """A loaded byte-level BPE tokenizer. Build one with `Tokenizer.load(path)`,
    `BPETokenizer.from_model(model, name)` or `BPETokenizer.from_spec(spec)`."""

    file_kinds = ("tiktoken", "reference", "hf-bpe", "gpt2-vocab", "gpt2-merges", "tekken", "tiktoken-encoding")
    fixes_surrogates = True  # as tiktoken: a surrogate pair is its character, a lone one U+FFFD

    def __init__(self, name: str, encoder: Encoder, special_tokens: dict[str, int],
                 pattern: str, normalizer: str | None = None, added_tokens: Mapping[str, int] | None = None,
                 in_vocabulary: Collection[int] = (), keep_unmatched: bool = False) -> None:
        """`added_tokens`: HF's non-special added tokens; `in_vocabulary`: the ids of special and
        added tokens that are also tokens of the model's vocabulary (HF files list some there);
        `keep_unmatched`: the text between two matches of `pattern` is a pretoken too (HF's Split
        `Isolated`), not dropped (tiktoken's rule; see `EncoderSpec`)."""
        super().__init__(name, special_tokens)
        self._encoder = encoder
        self._added_tokens = dict(added_tokens or {})
        self._in_vocabulary = frozenset(in_vocabulary)
        self._stripping: list[str] = []  # added tokens that take in white space (HF's lstrip, rstrip)
        self.has_supermerges = False  # a two-phase model (BoundlessBPE, SuperBPE); see from_model
        self.pattern = pattern
        self.normalizer = normalizer
        self._keep_unmatched = keep_unmatched
        # An unknown pattern: split in Python, merge in Cython.
        try:
            self._fallback = regex.compile(pattern) if pattern_id(pattern) is None else None
        except regex.error as e:  # (not in the message: a file's content)
            raise SqltokError(f"{name!r}: its pre-tokenization pattern is not a regular expression ({e.msg} at "
                              f"position {e.pos})") from None
        #: A str goes to the encoder as it is (no Python split, no normalizer): see `encode_ordinary`.
        self._plain = self._fallback is None and normalizer is None

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, file: TokenizerFile, name: str | None = None, pattern: str | None = None,
                  special_tokens: dict[str, int] | None = None) -> "BPETokenizer":
        """From a `.tiktoken` file (standard ones are recognized by their sha256; give `pattern`, and
        `special_tokens` if it has any, otherwise), an HF `tokenizer.json`, GPT-2's vocab.json +
        merges.txt or a reference `.model`."""
        if pattern is not None and file.kind != "tiktoken":
            raise SqltokError(f"pattern= is for .tiktoken files; {file.path} is {file.describe()}")
        if special_tokens is not None and file.kind != "tiktoken":
            raise SqltokError(f"special_tokens= is for .tiktoken files; {file.path} is {file.describe()}")
        name = name or file.path.stem
        if file.kind == "reference":
            tok = cls.from_model(read_reference(file.path), name)
        elif file.kind == "hf-bpe":
            tok = cls.from_spec(read_hf(file.path, name=name, document=file.document), name)
        elif file.kind == "tiktoken-encoding":  # kept in a database only
            tok = cls.from_spec(read_encoding_document(file.content, name), name)
        elif file.kind == "tekken":
            tok = cls.from_spec(read_tekken(file.path, file.document, name), name)
        elif file.kind in ("gpt2-vocab", "gpt2-merges"):
            vocab, merges = (file.path, file.companion) if file.kind == "gpt2-vocab" else (file.companion, file.path)
            tok = cls.from_spec(read_hf_vocab_merges(vocab, merges, name=name), name)
        else:
            tok = cls.from_spec(read_tiktoken(file.path, pattern=pattern, special_tokens=special_tokens, name=name),
                                name)
        if file.content is None:  # a model kept in a database pickles as its spec (from_spec, from_model)
            tok._pickle_as = (_from_pickled_file, (cls, str(file.path.absolute()), name, pattern, _digest(file),
                                                   special_tokens))
        return tok

    @classmethod
    def from_spec(cls, spec: EncoderSpec, name: str | None = None) -> "BPETokenizer":
        """From an `EncoderSpec` (tiktoken or HF)."""
        pid = pattern_id(spec.pattern)
        enc = Encoder(spec.tokens, spec.pairs, spec.byte_ids, spec.direct, PAT_NONE if pid is None else pid,
                      rank_guard=False, special_tokens=spec.special_tokens,
                      always_tokens=getattr(spec, "added_tokens", None) or {},
                      added_flags=getattr(spec, "added_flags", None) or {}, normalizer=spec.normalizer)
        added = getattr(spec, "added_tokens", None) or {}
        shared = [i for i in (*spec.special_tokens.values(), *added.values())
                  if i < len(spec.tokens) and spec.tokens[i] is not None]
        tok = cls(name or spec.name, enc, spec.special_tokens, spec.pattern, spec.normalizer, added, shared,
                  spec.keep_unmatched)
        tok._stripping = sorted(t for t, f in getattr(spec, "added_flags", {}).items() if f.lstrip or f.rstrip)
        tok._pickle_as = (cls.from_spec, (spec, name))
        return tok

    @classmethod
    def from_model(cls, model: Model, name: str) -> "BPETokenizer":
        """From a reference-format model (trained by sqltok or read from a `.model` file): BPE, or a
        two-phase BoundlessBPE/SuperBPE model whose supermerges apply after the regular merges."""
        pairs = [(m.left, m.right, rank, new) for rank, (m, new) in
                 enumerate(zip(model.merges, model.new_ids(model.merges)))]
        supers = [(m.left, m.right, rank, new) for rank, (m, new) in
                  enumerate(zip(model.supermerges, model.new_ids(model.supermerges)))]
        byte_ids = [-1] * 256
        for i, b in enumerate(BYTE_ALPHABET):
            byte_ids[b] = i
        if model.script_aware:
            pid, pattern = PATTERN_IDS["script_aware"], model.settings["main_regex"]
        else:
            pattern = model.settings["main_regex"]
            pid = pattern_id(pattern)
        if pattern != patterns.O200K and pid is None:
            raise SqltokError(f"model {name!r}: unsupported pre-tokenization pattern {pattern!r}")
        enc = Encoder(model.tokens, pairs, byte_ids, False, pid, rank_guard=True,
                      special_tokens=model.special_tokens, supermerges=supers)
        tok = cls(name, enc, model.special_tokens, pattern)
        tok.has_supermerges = bool(supers)
        tok._pickle_as = (cls.from_model, (model, name))
        return tok

    @classmethod
    def from_db(cls, con, name: str) -> "BPETokenizer":
        """The model `name` stored in a DuckDB database by sqltok."""
        return cls.from_model(load_model(con, name), name)

    # -- properties --------------------------------------------------------------------------------
    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (special tokens included)."""
        return self._encoder.n_vocab

    # -- Arrow (what the SQL functions call) -------------------------------------------------------
    def _prepare(self, texts: pa.Array, threads: int) -> pa.Array:
        """The texts as the encoder takes them: one array, in NFC when the tokenizer normalizes
        (Qwen's tokenizer.json), by sqltok's own normalizer."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if self.normalizer == "NFC":
            texts = normalize_arrow(texts, "NFC", threads)
        return texts

    def encode_arrow(self, texts: pa.Array, allowed_special: AllowedSpecial = (), threads: int | None = None,
                     counts_only: bool = False) -> pa.Array:
        """Ids (list<int32>) or token counts (int64) of a string array; NULL stays NULL."""
        threads = threads or default_threads()
        texts = self._prepare(texts, threads)
        allowed = self._allowed_ids(allowed_special)
        if self._fallback is None:
            return self._encoder.encode_arrow(texts, allowed, threads, counts_only)
        return self._encode_fallback(texts, allowed, threads, counts_only)

    def _encode_lists(self, texts: pa.Array, allowed_special: AllowedSpecial,
                      threads: int | None) -> list[list[int]]:
        threads = threads or default_threads()
        arr = self._prepare(texts, threads)
        allowed = self._allowed_ids(allowed_special)
        if self._fallback is None:
            return self._encoder.encode_arrow(arr, allowed, threads, as_lists=True)
        return self._encode_fallback(arr, allowed, threads, False).to_pylist()

    def _encode_texts(self, texts: list[str], allowed_special: AllowedSpecial, counts_only: bool = False) -> list:
        if self._fallback is not None or (self.normalizer and not all(t.isascii() for t in texts)):
            return super()._encode_texts(texts, allowed_special, counts_only)  # (NFC leaves ASCII alone)
        allowed = self._allowed_ids(allowed_special)
        try:
            return self._encoder.encode_strs(texts, allowed, counts_only)
        except UnicodeEncodeError:
            return self._encoder.encode_strs(self._utf8_texts(texts), allowed, counts_only)

    def _encode_text(self, text: str, allowed_special: AllowedSpecial, counts_only: bool = False) -> list[int] | int:
        if self._fallback is not None or (self.normalizer and not text.isascii()):
            return super()._encode_text(text, allowed_special, counts_only)
        allowed = self._allowed_ids(allowed_special) if allowed_special else None
        try:
            return self._encoder.encode_str(text, allowed, counts_only)
        except UnicodeEncodeError:
            return self._encoder.encode_str(self._utf8_texts([text])[0], allowed, counts_only)

    def encode_ordinary(self, text: str) -> list[int]:
        """`Tokenizer.encode_ordinary`, one call to the encoder when the str goes to it as it is (a
        Python frame less: at 8 bytes the frames cost more than the encoding)."""
        if self._plain and type(text) is str:
            try:
                return self._encoder.encode_str(text)
            except UnicodeEncodeError:  # a surrogate: fixed on the way below
                pass
        return super().encode_ordinary(text)

    def token_count(self, text: str) -> int:
        """`Tokenizer.token_count`, one call to the encoder as `encode_ordinary`."""
        if self._plain and type(text) is str:
            try:
                return self._encoder.encode_str(text, None, True)
            except UnicodeEncodeError:
                pass
        return super().token_count(text)

    def decode(self, ids: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool | None = None) -> str:
        """`Tokenizer.decode` in one call to the encoder: the str straight from the joined bytes."""
        return self._encoder.decode_text(ids, errors, self._skips(skip_special_tokens))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """`Tokenizer.decode_bytes` in one call to the encoder."""
        return self._encoder.decode_ids(ids)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int | None = None,
                     skip_special_tokens: bool | None = None) -> list[str]:
        """`Tokenizer.decode_batch`, a batch that is not all UTF-8 decoded row by row as `decode` does
        (as tiktoken: "strict" raises UnicodeDecodeError, "surrogateescape" gives lone surrogates, which
        no Arrow string holds)."""
        skips = self._skips(skip_special_tokens)
        data = self._decode_rows(batch, lambda ids: self._encoder.decode_arrow(ids, skips))
        try:
            return data.cast(pa.large_string()).to_pylist()
        except pa.ArrowInvalid:
            return [b.decode("utf-8", errors) for b in data.to_pylist()]

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
                    for piece in self._fallback_pretokens(segment):
                        pieces.append(piece)
                        owners.append((r, None))
        encoded = self._encoder.encode_arrow(pa.array([p or "" for p in pieces], pa.large_string()), None, threads)
        out: list = [None if t is None else [] for t in rows]
        for (r, special), ids in zip(owners, encoded.to_pylist()):
            out[r].extend([special] if special is not None else ids)
        if counts_only:
            return pa.array([None if x is None else len(x) for x in out], pa.int64())
        return pa.array(out, pa.large_list(pa.int32()))

    def decode_arrow(self, ids: pa.Array, errors: str = "replace",
                     skip_special_tokens: bool | None = None) -> pa.Array:
        """Texts (large_string) of a list<integer> array; invalid UTF-8 is replaced by U+FFFD
        (errors="replace") or raises (errors="strict"); special tokens are their text unless
        `skip_special_tokens` (as tiktoken, and HF's `decode(ids, skip_special_tokens=False)`)."""
        return _to_text(self._encoder.decode_arrow(ids, self._skips(skip_special_tokens)), errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id; UnknownTokenError (a KeyError) for an id without a token."""
        return self._encoder.token_bytes(operator.index(token))  # (Cython's int32_t would take 2.5 as 2)

    # -- tiktoken's and HF's API beyond encode and decode ------------------------------------------
    def decode_bytes_arrow(self, ids: pa.Array) -> pa.Array:
        """Bytes (large_binary) of a list<integer> array."""
        return self._encoder.decode_arrow(ids)

    def vocabularies(self) -> tuple[dict[str, int], dict[str, int]]:
        """(model vocabulary, added tokens) as HF holds them: each token of the model in GPT-2's
        byte-to-unicode form ("Ġworld"), each special and added token as its text."""
        added = {**self._special_tokens, **self._added_tokens}
        added_only = set(added.values()) - self._in_vocabulary
        model = {bytes_to_unicode_str(b): t for t, b in enumerate(self.token_bytes_array().to_pylist())
                 if b is not None and t not in added_only}
        return model, added

    def encode_with_offsets(self, text: str) -> EncodedText:
        """`encode_ordinary(text)` with HF's character offsets of each token into `text` (into the
        original text when the tokenizer normalizes it)."""
        text = require_str([text])[0]
        require_unicode(text)
        ids = self.encode_ordinary(text)
        normalized = normalize(text, self.normalizer) if self.normalizer else text
        origin = nfc_origin(text) if self.normalizer else None
        lengths = np.asarray(pc.binary_length(self.token_bytes_array().take(pa.array(ids, pa.int32()))).to_numpy(),
                             np.int64)
        if not self._added_tokens and not self._stripping and (self._fallback is None or self._keep_unmatched):
            return EncodedText(ids, byte_span_offsets(normalized, lengths, origin))
        return EncodedText(ids, byte_range_offsets(normalized, *self._byte_ranges(normalized, lengths), origin))

    def _byte_ranges(self, text: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The UTF-8 byte range in `text` (as the encoder takes it) of each token of
        `encode_ordinary(text)` (`lengths` bytes each), where they need not lie back to back over it:
        an added token's is its match (with the white space its lstrip/rstrip takes in; a `normalized`
        one's content in NFC), as HF gives it; the other tokens lie over the bytes of their segment
        that a pattern the matcher does not know matches (tiktoken's rule, HF's Split `Removed` with
        `invert`: the rest is left out), or over all of them."""
        data = text.encode()
        starts, ends = np.zeros(len(lengths), np.int64), np.zeros(len(lengths), np.int64)
        done = np.concatenate([[0], np.cumsum(lengths)])  # bytes of the tokens before each token
        k = 0
        for start, end, token in self._encoder.split_added(text, None, True):
            if token >= 0:
                if k >= len(lengths):
                    raise ValueError("the tokens do not cover the text's bytes")
                starts[k], ends[k] = start, end
                k += 1
                continue
            if self._fallback is None or self._keep_unmatched:
                at = np.arange(start, end)
            else:
                segment = data[start:end].decode()
                byte_at = start + np.concatenate([[0], np.cumsum([len(c.encode()) for c in segment], dtype=np.int64)])
                at = np.concatenate([np.zeros(0, np.int64)] + [np.arange(byte_at[m.start()], byte_at[m.end()])
                                                               for m in self._fallback.finditer(segment)])
            if not len(at):
                continue
            last = int(np.searchsorted(done, done[k] + len(at)))  # the tokens k..last-1 lie over `at`
            if last >= len(done) or done[last] != done[k] + len(at):
                raise ValueError("the tokens do not cover the text's bytes")
            starts[k:last] = at[done[k:last] - done[k]]
            ends[k:last] = at[done[k + 1:last + 1] - done[k] - 1] + 1
            k = last
        if k != len(lengths):
            raise ValueError("the tokens do not cover the text's bytes")
        return starts, ends

    def encode_with_unstable(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
                             disallowed_special: AllowedSpecial = "all") -> tuple[list[int], list[list[int]]]:
        """tiktoken's `encode_with_unstable`: (stable tokens, completions), the tokens of `text` that
        no continuation can change and every token sequence a continuation may start with (see
        `sqltok.bpe.unstable`). Completions come in no particular order, as in tiktoken."""
        if self.has_supermerges:
            raise SqltokError(f"{self.name!r} is a superword model: its tokens cross pretokens, so none is stable")
        text = require_str([text])[0]
        self._check_disallowed([text], allowed_special, disallowed_special)
        allowed = self._allowed_ids(allowed_special)
        tokens = self.encode(text, allowed_special=allowed_special, disallowed_special=())
        tail = ""
        for segment, special in self._split_specials(text, allowed):
            tail = segment if special is None else ""
        tail = normalize(tail, self.normalizer) if self.normalizer else tail
        pieces = self._pretokens(tail)
        last_piece = len(self.encode_ordinary(pieces[-1])) if pieces else 0
        return unstable_completions(tokens, last_piece, self.decode_single_token_bytes, self.sorted_tokens(),
                                    self.encode_ordinary_batch, self._encoder.merge_bytes)

    def _split_specials(self, text: str, allowed) -> list[tuple[str, int | None]]:
        """`Tokenizer._split_specials` as the encoder matches added tokens (HF's flags)."""
        return self._encoder.split_added(text, allowed)

    def _pretokens(self, text: str) -> list[str]:
        """The pretokens of `text` under the tokenizer's pattern."""
        if self._fallback is not None:
            return self._fallback_pretokens(text)
        return pretokenize(text, pattern=self._encoder.pattern)

    def _fallback_pretokens(self, text: str) -> list[str]:
        """The pretokens of `text` under a pattern the Cython matcher does not know: its matches, whole
        (tiktoken's `find_iter`, whatever groups the pattern captures), and with `keep_unmatched` each
        run of text between them too (HF's Split `Isolated`)."""
        if not self._keep_unmatched:
            return [m.group() for m in self._fallback.finditer(text)]
        out, at = [], 0
        for m in self._fallback.finditer(text):
            if m.start() > at:
                out.append(text[at:m.start()])
            if m.end() > m.start():
                out.append(m.group())
            at = m.end()
        if at < len(text):
            out.append(text[at:])
        return out


def _digest(file: TokenizerFile) -> str:
    """sha256 of the files a tokenizer was read from (the file and its companion)."""
    h = hashlib.sha256()
    for path in (file.path, file.companion):
        if path is not None:
            h.update(read_bytes(path))
    return h.hexdigest()


def _from_pickled_file(cls: type[BPETokenizer], path: str, name: str, pattern: str | None,
                       digest: str, special_tokens: dict[str, int] | None = None) -> BPETokenizer:
    """A pickled tokenizer's file read again, refused when its content changed since."""
    file = sniff(Path(path))
    if _digest(file) != digest:
        raise SqltokError(f"{path} changed since the tokenizer {name!r} was pickled; load it again")
    return cls.from_file(file, name, pattern=pattern, special_tokens=special_tokens)


def _to_text(data: pa.Array, errors: str) -> pa.Array:
    """large_binary -> large_string, validating UTF-8; invalid rows replaced (U+FFFD) or an error."""
    try:
        return data.cast(pa.large_string())
    except pa.ArrowInvalid:
        if errors == "strict":
            raise ValueError("the token ids do not decode to valid UTF-8") from None
        return pa.array([None if b is None else b.decode("utf-8", errors) for b in data.to_pylist()],
                        pa.large_string())
