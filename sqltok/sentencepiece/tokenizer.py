"""`SentencePieceTokenizer`: SentencePiece models (`.model` files of type UNIGRAM or BPE: T5, mT5,
XLM-R, ALBERT, Llama 2, Mistral), with `Tokenizer`'s API and ids identical to
`sentencepiece.SentencePieceProcessor.encode` (no BOS/EOS unless asked); decoding is its `decode`.

Special tokens are the control and unknown pieces (<s>, </s>, <unk>, Mistral's [INST] ...):
`encode` treats their text as text, as sentencepiece does; with `allowed_special` they are matched
and the text between them encoded piece by piece (each piece normalized on its own, as HF's and
mistral-common's tokenizers do it).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.errors import SqltokError
from sqltok.formats.files import read_bytes
from sqltok.formats.kind import TokenizerFile
from sqltok.sentencepiece._encode import SentencePieceEncoder
from sqltok.sentencepiece.model_proto import ModelType, PieceType, SentencePieceModel, read_model_proto
from sqltok.sentencepiece.model_write import write_model_proto
from sqltok.threads import default_threads
from sqltok.token_offsets import EncodedText, byte_offsets_to_chars, require_unicode
from sqltok.tokenizer import AllowedSpecial, Tokenizer, require_str


class SentencePieceTokenizer(Tokenizer):
    """A loaded SentencePiece model; build one with `Tokenizer.load(path)`,
    `SentencePieceTokenizer.from_bytes(content, name)` or `from_model(model, name)`."""

    file_kinds = ("sentencepiece",)

    def __init__(self, model: SentencePieceModel, name: str,
                 hf_whitespace: tuple[bool, bool, bool, bool] | None = None, hf_json: bool = False,
                 ignore_merges: str | None = None) -> None:
        """`hf_whitespace`, `hf_json` and `ignore_merges`: HF `tokenizers`' steps in place of
        sentencepiece's (see `HfSentencePieceTokenizer`)."""
        specials = {p: i for i, (p, t) in enumerate(zip(model.pieces, model.types))
                    if t in (PieceType.CONTROL, PieceType.UNKNOWN)}
        super().__init__(name, specials)
        self.model = model
        self._encoder = sentencepiece_encoder(model, model.normalizer.precompiled_charsmap, hf_whitespace, hf_json,
                                              ignore_merges)
        self._token_strings = pa.array(model.pieces, pa.large_string())  # tokens() shows pieces as spelled
        self._token_bytes = self._token_strings.cast(pa.large_binary())

    @classmethod
    def from_file(cls, file: TokenizerFile, name: str | None = None, **options) -> "SentencePieceTokenizer":
        """From a sniffed SentencePiece `.model` file."""
        if options:
            raise TypeError(f"a SentencePiece model takes no options, got {sorted(options)}")
        if file.kind != "sentencepiece":
            raise SqltokError(f"{file.path} is {file.describe()}, not a SentencePiece model")
        content = read_bytes(file.path) if file.content is None else file.content  # (a model kept in a database)
        return cls.from_bytes(content, name or file.path.name.split(".")[0], source=str(file.path))

    @classmethod
    def from_bytes(cls, content: bytes, name: str, source: str | None = None) -> "SentencePieceTokenizer":
        """From the bytes of a `.model` file (a model stored in the database as a BLOB); errors name
        `source` (default: the model's name)."""
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise TypeError(f"content must be the bytes of a .model file, not {type(content).__name__}")
        tok = cls(read_model_proto(bytes(content), source or f"model {name!r}"), name)
        tok._pickle_as = (cls.from_bytes, (bytes(content), name, source))
        return tok

    @classmethod
    def from_model(cls, model: SentencePieceModel, name: str) -> "SentencePieceTokenizer":
        """From a `SentencePieceModel` (read, or built by a trainer); it pickles as its `.model` bytes."""
        tok = cls(model, name)
        tok._pickle_as = (cls.from_bytes, (write_model_proto(model), name, None))
        return tok

    @property
    def n_vocab(self) -> int:
        return self._encoder.n_vocab

    # -- one text from Python: the encoder reads the str or ids itself, no Arrow on the way ----------
    #: Whether a text without allowed special tokens goes to the encoder as it is, and ids come back
    #: from it as they are (HF's pipelines add steps around the encoder, and say False).
    _direct = True

    def _encode_text(self, text: str, allowed_special: AllowedSpecial, counts_only: bool = False) -> list[int] | int:
        if self._direct and self._allowed_ids(allowed_special) is None:
            try:
                return self._encoder.encode_str(text, self._int_objects(), counts_only)
            except UnicodeEncodeError:  # a surrogate: fixed (or refused) on the Arrow path below
                pass
        return super()._encode_text(text, allowed_special, counts_only)

    def _decode_ids(self, ids, skip_special_tokens: bool | None = None) -> bytes:
        if self._direct and not self._skips(skip_special_tokens):
            return self._encoder.decode_ids(ids)
        return super()._decode_ids(ids, skip_special_tokens)

    def normalize(self, text: str) -> str:
        """`text` as the model's normalizer gives it to the model ("▁Hello▁world")."""
        return self._encoder.normalize(text)

    # -- Arrow (what the SQL functions call) -------------------------------------------------------
    def encode_arrow(self, texts: pa.Array, allowed_special: AllowedSpecial = (), threads: int | None = None,
                     counts_only: bool = False) -> pa.Array:
        """Ids (large_list<int32>) or token counts (int64) of a string array; NULL stays NULL."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        threads = threads or default_threads()
        allowed = self._allowed_ids(allowed_special)
        if allowed is None:
            return self._encode_segments(texts, threads, counts_only)

        def encode_parts(parts: list[str]) -> list[list[int]]:
            return self._encode_segments(pa.array(parts, pa.large_string()), 1, False).to_pylist()

        ids = self._rows_with_specials(texts, self._encode_segments(texts, threads, False), allowed,
                                       lambda text: self._split_encode(text, allowed, encode_parts))
        return pc.list_value_length(ids).cast(pa.int64()) if counts_only else ids

    def _encode_segments(self, texts: pa.Array, threads: int, counts_only: bool) -> pa.Array:
        """The encoder over texts without special tokens (each a whole text, or a segment between
        special tokens)."""
        return self._encoder.encode_arrow(texts, threads, counts_only)

    def decode_arrow(self, ids: pa.Array, errors: str = "replace",
                     skip_special_tokens: bool | None = None) -> pa.Array:
        """Texts (large_string) of a list<integer> array, as sentencepiece's `decode` gives them
        (always valid UTF-8: a byte piece that is no character on its own is U+FFFD), of the ids
        without the special ones (control and unknown pieces) when `skip_special_tokens`."""
        if self._skips(skip_special_tokens):
            ids = self._without_special_ids(ids)
        return self._encoder.decode_arrow(ids)

    def vocabularies(self) -> tuple[dict[str, int], dict[str, int]]:
        """(model vocabulary, added tokens) as HF holds a converted SentencePiece model: every piece
        as spelled ("▁the", "<0x0A>"), and the control and unknown pieces."""
        return {p: i for i, p in enumerate(self.model.pieces)}, dict(self._special_tokens)

    def encode_with_offsets(self, text: str) -> EncodedText:
        """`encode_ordinary(text)` with each token's (start, end) character offsets into `text`:
        sentencepiece's byte `begin`/`end` (`encode(text, out_type='immutable_proto')`) as indices
        into the Python string. A token covers the original characters its normalized text came
        from ("▁world" of "hello world" covers " world"; the dummy prefix belongs to the first
        word); a run of unknown characters is one token over them all; of an unknown character's
        byte pieces the last covers the character and the others are empty at its start."""
        text = require_str([text])[0]
        require_unicode(text)
        ids, begins, ends = self._encoder.encode_with_byte_offsets(text)
        return EncodedText(ids, byte_offsets_to_chars(text, begins.to_numpy(), ends.to_numpy()))

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """`decode(tokens)` and the character index where each token's text starts in it, as
        sentencepiece's `decode(ids, out_type="proto")` pieces' `begin` (the byte pieces of one
        character all at that character; a control piece, which decodes to nothing, where it stands)."""
        tokens = list(tokens)  # any iterable of ids, as tiktoken's
        data, starts = self._encoder.decode_ids(tokens, True)
        chars_before = np.concatenate([[0], np.cumsum((np.frombuffer(data, np.uint8) & 0xC0) != 0x80)])
        return data.decode(), chars_before[np.asarray(starts, np.int64)].tolist()

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The piece of one id as the model spells it ("▁the", "<0x0A>")."""
        return self._encoder.piece_bytes(operator.index(token))  # (Cython's int32_t would take 2.5 as 2)


def sentencepiece_encoder(model: SentencePieceModel, charsmap: bytes,
                          hf_whitespace: tuple[bool, bool, bool, bool] | None = None,
                          hf_json: bool = False, ignore_merges: str | None = None) -> SentencePieceEncoder:
    """The encoder of a model, with `charsmap` as its precompiled charsmap (the other options: see
    `SentencePieceEncoder`)."""
    norm = model.normalizer
    return SentencePieceEncoder(
        model.pieces, model.scores, [int(t) for t in model.types], model.trainer.model_type == ModelType.BPE,
        model.trainer.byte_fallback, charsmap, norm.add_dummy_prefix, norm.remove_extra_whitespaces,
        norm.escape_whitespaces, model.trainer.treat_whitespace_as_suffix, model.unk_surface, hf_whitespace,
        hf_json, ignore_merges)
