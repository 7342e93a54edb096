"""`BPETokenizer`: byte-level BPE tokenizers (tiktoken files, HF `tokenizer.json` byte-level BPE,
GPT-2's vocab.json + merges.txt, reference `.model` files, Mistral's Tekken JSON, models trained by
sqltok); the work happens in the Cython `Encoder` over Arrow arrays with the GIL released.
"""
from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import regex

from sqltok.bpe._encode import Encoder
from sqltok.bpe.encoder_spec import EncoderSpec
from sqltok.bpe.hf_read import read_hf, read_hf_vocab_merges
from sqltok.bpe.model import BYTE_ALPHABET, Model
from sqltok.bpe.reference_file import read_reference
from sqltok.bpe.tekken_file import read_tekken
from sqltok.bpe.tiktoken_file import read_tiktoken
from sqltok.errors import SqltokError
from sqltok.formats.kind import TokenizerFile
from sqltok.normalizers._normalize import normalize_arrow
from sqltok.pretokenizer import patterns
from sqltok.pretokenizer._pretokenize import PATTERN_IDS, pattern_id
from sqltok.store import load_model
from sqltok.threads import default_threads
from sqltok.tokenizer import AllowedSpecial, Tokenizer, id_array

#: Pattern id meaning "each piece is already one pretoken" (used after a Python `regex` split).
PAT_NONE = -1


class BPETokenizer(Tokenizer):
    """A loaded byte-level BPE tokenizer. Build one with `Tokenizer.load(path)`,
    `BPETokenizer.from_model(model, name)` or `BPETokenizer.from_spec(spec)`."""

    file_kinds = ("tiktoken", "reference", "hf-bpe", "gpt2-vocab", "gpt2-merges", "tekken")
    fixes_surrogates = True  # as tiktoken: a surrogate pair is its character, a lone one U+FFFD

    def __init__(self, name: str, encoder: Encoder, special_tokens: dict[str, int],
                 pattern: str, normalizer: str | None = None) -> None:
        super().__init__(name, special_tokens)
        self._encoder = encoder
        self.has_supermerges = False  # a two-phase model (BoundlessBPE, SuperBPE); see from_model
        self.pattern = pattern
        self.normalizer = normalizer
        # An unknown pattern: split in Python, merge in Cython.
        self._fallback = regex.compile(pattern) if pattern_id(pattern) is None else None

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, file: TokenizerFile, name: str | None = None, pattern: str | None = None) -> "BPETokenizer":
        """From a `.tiktoken` file (standard ones are recognized by their sha256; give `pattern`
        otherwise), an HF `tokenizer.json`, GPT-2's vocab.json + merges.txt or a reference `.model`."""
        if pattern is not None and file.kind != "tiktoken":
            raise SqltokError(f"pattern= is for .tiktoken files; {file.path} is {file.describe()}")
        name = name or file.path.stem
        if file.kind == "reference":
            return cls.from_model(read_reference(file.path), name)
        if file.kind == "hf-bpe":
            return cls.from_spec(read_hf(file.path, name=name, document=file.document), name)
        if file.kind == "tekken":
            return cls.from_spec(read_tekken(file.path, file.document, name), name)
        if file.kind in ("gpt2-vocab", "gpt2-merges"):
            vocab, merges = (file.path, file.companion) if file.kind == "gpt2-vocab" else (file.companion, file.path)
            return cls.from_spec(read_hf_vocab_merges(vocab, merges, name=name), name)
        return cls.from_spec(read_tiktoken(file.path, pattern=pattern, name=name), name)

    @classmethod
    def from_spec(cls, spec: EncoderSpec, name: str | None = None) -> "BPETokenizer":
        """From an `EncoderSpec` (tiktoken or HF)."""
        pid = pattern_id(spec.pattern)
        enc = Encoder(spec.tokens, spec.pairs, spec.byte_ids, spec.direct, PAT_NONE if pid is None else pid,
                      rank_guard=False, special_tokens=spec.special_tokens,
                      always_tokens=getattr(spec, "added_tokens", None) or {})
        return cls(name or spec.name, enc, spec.special_tokens, spec.pattern, spec.normalizer)

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

    def decode_arrow(self, ids: pa.Array, errors: str = "replace") -> pa.Array:
        """Texts (large_string) of a list<integer> array; invalid UTF-8 is replaced by U+FFFD
        (errors="replace") or raises (errors="strict")."""
        return _to_text(self._encoder.decode_arrow(ids), errors)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of `ids`."""
        return self._encoder.decode_arrow(id_array(ids))[0].as_py()

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """The text of `ids`; bytes that are not UTF-8 become U+FFFD unless errors="strict"."""
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id; ValueError for an id without a token."""
        return self._encoder.token_bytes(token)


def _to_text(data: pa.Array, errors: str) -> pa.Array:
    """large_binary -> large_string, validating UTF-8; invalid rows replaced (U+FFFD) or an error."""
    try:
        return data.cast(pa.large_string())
    except pa.ArrowInvalid:
        if errors == "strict":
            raise ValueError("the token ids do not decode to valid UTF-8") from None
        return pa.array([None if b is None else b.decode("utf-8", errors) for b in data.to_pylist()],
                        pa.large_string())
