"""`HfSentencePieceTokenizer`: a SentencePiece-style HF tokenizer.json (kinds `hf-unigram`,
`hf-sp-bpe`; see `hf_read.py`) on the SentencePiece encoder, with ids and decoded text identical to
HF `tokenizers`' `encode(text, add_special_tokens=False)` and `decode(ids)`. A Unigram model is
encoded on HF's lattice (float64 scores, where sentencepiece's float32 can break a tie the other way).
A text holding a grapheme of several characters goes through HF's own Precompiled normalizer
(`hf_precompiled.pxd`, picked out by `hf_graphemes`); the others through sentencepiece's, equal there.
Added tokens (the allowed special ones, and always the others, with HF's flags) are matched before
the normalizer, and each text between them is encoded on its own, as HF does. Offsets
(`encode_with_offsets`) are HF's, by its pipeline followed with alignments (`hf_offsets`).

Decoding follows HF's decoder chain: special tokens are left out (HF's `skip_special_tokens`
default; with `skip_special_tokens=False` they are their text), every other id is its piece ("<unk>"
as spelled), "▁" a space (the Metaspace decoder: none in the first token), runs of byte tokens
their bytes. Rows whose bytes are valid UTF-8 (all that encoding gives) are joined in Arrow; a row
holding a byte run that is no UTF-8 gets HF's one U+FFFD per byte of that run.
"""
from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqltok.added_rows import AddedRows
from sqltok.errors import SqltokError, token_id_error
from sqltok.formats.errors import ModelFormatError
from sqltok.formats.files import read_bytes
from sqltok.formats.json_file import load_json
from sqltok.formats.kind import TokenizerFile
from sqltok.native.list_views import as_large_list
from sqltok.sentencepiece.hf_graphemes import grapheme_ends, multi_char_graphemes
from sqltok.sentencepiece.hf_offsets import hf_offsets
from sqltok.sentencepiece.hf_read import SPACE, HfSentencePiece, read_hf_sentencepiece
from sqltok.sentencepiece.hf_text_steps import apply_text_steps
from sqltok.sentencepiece.model_proto import BYTE_PIECE, PieceType
from sqltok.sentencepiece.tokenizer import SentencePieceTokenizer, sentencepiece_encoder
from sqltok.threads import default_threads
from sqltok.token_offsets import EncodedText, require_unicode
from sqltok.tokenizer import AllowedSpecial, require_str


class HfSentencePieceTokenizer(SentencePieceTokenizer):
    """A SentencePiece-style tokenizer.json; build one with `Tokenizer.load(path)` or
    `from_json(text, name)`."""

    file_kinds = ("hf-unigram", "hf-sp-bpe")
    skips_special_tokens = True  # HF's decode default
    _direct = False  # added tokens, HF's charsmap fixes, prefix and decoders around the encoder

    def __init__(self, hf: HfSentencePiece, name: str) -> None:
        super().__init__(hf.model, name, hf.whitespace, hf_json=True, ignore_merges=hf.ignore_merges)
        # texts with a grapheme of several characters: HF's Precompiled, then this encoder without one
        self._after_charsmap = sentencepiece_encoder(hf.model, b"", hf.whitespace, True, hf.ignore_merges) \
            if hf.model.normalizer.precompiled_charsmap else None
        self._special_tokens = dict(hf.special_tokens)
        self._special_by_id = {i: s for s, i in self._special_tokens.items()}
        self.hf = hf
        dec = hf.decoder
        parts = []
        for i, (piece, kind) in enumerate(zip(hf.model.pieces, hf.model.types)):
            if kind == PieceType.BYTE and dec.byte_fallback:
                parts.append(bytes([int(BYTE_PIECE.fullmatch(piece).group(1), 16)]))
            else:
                parts.append((piece.replace(SPACE, " ") if dec.replace_space else piece).encode())
        self._decoded = pa.array(parts, pa.large_binary())
        # the Metaspace decoder: the first token without its "▁"s
        self._decoded_first = pa.array([piece.replace(SPACE, "").encode() for piece in hf.model.pieces],
                                       pa.large_binary())
        self._added = AddedRows(hf.special_tokens, hf.added_tokens, hf.added_flags)

    @classmethod
    def from_file(cls, file: TokenizerFile, name: str | None = None, **options) -> "HfSentencePieceTokenizer":
        """From a sniffed tokenizer.json of kind `hf-unigram` or `hf-sp-bpe`."""
        if options:
            raise TypeError(f"a tokenizer.json takes no options, got {sorted(options)}")
        if file.kind not in cls.file_kinds:
            raise SqltokError(f"{file.path} is {file.describe()}, not a SentencePiece-style tokenizer.json")
        content = read_bytes(file.path) if file.content is None else file.content
        if name is None:
            name = file.path.parent.name if file.path.name == "tokenizer.json" and file.path.parent.name \
                else file.path.stem
        return cls.from_json(content.decode("utf-8"), name, source=str(file.path), document=file.document)

    @classmethod
    def from_json(cls, text: str, name: str, source: str | None = None,
                  document: object = None) -> "HfSentencePieceTokenizer":
        """From the text of a tokenizer.json; errors name `source` (default: the model's name)."""
        where = source or f"model {name!r}"
        doc = json.loads(text) if document is None else document
        if not isinstance(doc, dict):
            raise ModelFormatError(f"{where}: not a tokenizer.json (a JSON object)")
        try:
            hf = read_hf_sentencepiece(doc)
        except ModelFormatError as e:
            raise type(e)(f"{where}: {e}") from None
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:  # a part of the wrong shape
            raise ModelFormatError(f"{where}: not a well-formed SentencePiece-style tokenizer.json (a missing key or "
                                   f"a value of the wrong type: {type(e).__name__})") from None
        tok = cls(hf, name)
        tok._pickle_as = (cls.from_json, (text, name, source))
        return tok

    # -- Arrow (what the SQL functions call) -------------------------------------------------------
    def _encode_segments(self, texts: pa.Array, threads: int, counts_only: bool) -> pa.Array:
        texts = texts.cast(pa.large_string())
        if self.hf.text_steps:
            texts = apply_text_steps(self.hf.text_steps, texts)
        ids = super()._encode_segments(texts, threads, counts_only)
        picked = multi_char_graphemes(texts) if self._after_charsmap is not None else None
        if picked is None or not pc.any(picked).as_py():
            return ids
        rows = texts.filter(picked).to_pylist()
        normalized = pa.array([self._encoder.hf_precompiled(t, grapheme_ends(t)) for t in rows], pa.large_string())
        fixed = self._after_charsmap.encode_arrow(normalized, threads, counts_only)
        # row r is taken from `ids`, or from `fixed` (appended after them) when it was picked
        order = pc.replace_with_mask(pa.array(range(len(ids)), pa.int64()), picked,
                                     pa.array(range(len(ids), len(ids) + len(fixed)), pa.int64()))
        return pa.concat_arrays([ids, fixed]).take(order)

    def encode_arrow(self, texts: pa.Array, allowed_special: AllowedSpecial = (), threads: int | None = None,
                     counts_only: bool = False) -> pa.Array:
        """Ids (large_list<int32>) or token counts (int64) as HF's `encode(text, add_special_tokens=False)`
        gives them: the added tokens (the allowed special ones, and always the others) matched
        first, each text between them encoded on its own (`sqltok.added_rows`)."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        texts = texts.cast(pa.large_string())
        threads = threads or default_threads()
        allowed = self._allowed_ids(allowed_special)
        if allowed is None and not self.hf.added_tokens:
            if self.hf.prefix_first:
                texts = self._prefixed(texts)
            return self._encode_segments(texts, threads, counts_only)

        def encode(segments: pa.Array, first: pa.Array) -> pa.Array:
            return self._encode_segments(self._prefixed(segments, first) if self.hf.prefix_first else segments,
                                         threads, False)

        ids = self._added.encode(texts, allowed, encode, mark_first=True)
        return pc.list_value_length(ids).cast(pa.int64()) if counts_only else ids

    @staticmethod
    def _prefixed(texts: pa.Array, where: pa.Array | None = None) -> pa.Array:
        """Metaspace "first": "▁" before each text (of those `where` marks) that is not empty and
        does not start with " " or "▁" (a space becomes one); HF gives it to the text a row starts
        with, none after an added token."""
        bare = pc.invert(pc.or_(pc.starts_with(texts, " "), pc.starts_with(texts, SPACE)))
        bare = pc.and_(bare, pc.greater(pc.utf8_length(texts), 0))
        if where is not None:
            bare = pc.and_(bare, where)
        return pc.if_else(bare, pc.binary_join_element_wise(pa.scalar(SPACE, pa.large_string()), texts,
                                                            pa.scalar("", pa.large_string())), texts)

    def encode_with_offsets(self, text: str, allowed_special: AllowedSpecial = ()) -> EncodedText:
        """`encode(text, allowed_special=...)` (special-token text as text unless allowed; the other
        added tokens always matched) with each token's character offsets into `text`, equal to HF's
        `encode(text, add_special_tokens=False).offsets` (HF matches every special token: pass
        `allowed_special="all"` for its ids). How they are found: `hf_offsets`."""
        text = require_str([text])[0]
        require_unicode(text)
        allowed = self._allowed_ids(allowed_special)
        try:
            return hf_offsets(self.hf, self._encoder, self._added.splitter, text, allowed)
        except ValueError as e:
            raise SqltokError(f"{self.name}: offsets of this text cannot be aligned as HF aligns them ({e})") from None

    def decode_arrow(self, ids: pa.Array, errors: str = "replace",
                     skip_special_tokens: bool | None = None) -> pa.Array:
        """Texts (large_string) of a list<integer> array as HF's `decode(ids, skip_special_tokens)`
        gives them (the special tokens' ids taken out first, as HF does); NULL stays NULL, an id
        without a token raises `token_id_error` (one no u32 holds before the others)."""
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        ids = as_large_list(ids, pa.int64())
        flat = pc.list_flatten(ids)
        if len(flat) and (pc.min(flat).as_py() < 0 or pc.max(flat).as_py() >= self.n_vocab):
            bad = flat.filter(pc.or_(pc.less(flat, 0), pc.greater_equal(flat, self.n_vocab)))
            outside = bad.filter(pc.or_(pc.less(bad, 0), pc.greater_equal(bad, 2**32)))  # first, as tiktoken's
            raise token_id_error((outside if len(outside) else bad)[0].as_py(), self.n_vocab)
        if self._skips(skip_special_tokens):
            ids = self._without_special_ids(ids)
            flat = pc.list_flatten(ids)
        offsets = pc.subtract(ids.offsets, ids.offsets[0])
        decoded = self._decoded.take(flat)
        if self.hf.decoder.drop_first_spaces:
            decoded = pc.if_else(self._first_tokens(ids), self._decoded_first.take(flat), decoded)
        parts = pa.LargeListArray.from_arrays(offsets, decoded)
        joined = pc.binary_join(parts, pa.scalar(b"", pa.large_binary()))
        out = self._texts(joined, ids)
        if self.hf.decoder.strip_first:
            out = pc.replace_substring_regex(out, pattern="^ ", replacement="", max_replacements=1)
        return pc.if_else(ids.is_null(), pa.scalar(None, pa.large_string()), out) if ids.null_count else out

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """`decode(tokens)` (HF's decoders, special tokens left out) and the character index where
        each token's part starts in it: the byte tokens of one character at that character, a
        special token, which decodes to nothing, where it stands."""
        tokens = list(tokens)  # any iterable of ids, as tiktoken's
        text = self.decode(tokens)
        dec = self.hf.decoder
        starts: list[int | None] = []
        at, run, run_tokens, first = 0, bytearray(), [], True  # characters so far; the byte run: bytes, tokens
        for t in list(tokens) + [None]:
            if t is not None and t in self._special_by_id:
                starts.append(None)  # (where the next part starts)
                continue
            if t is not None and dec.byte_fallback and self.model.types[t] == PieceType.BYTE:
                run_tokens.append(len(starts))
                starts.append(None)
                run += self._decoded[t].as_py()
                first = False
                continue
            if run:  # HF's ByteFallback: the run's characters, or one U+FFFD per byte when it is no UTF-8
                try:
                    chars = np.cumsum((np.frombuffer(bytes(run), np.uint8) & 0xC0) != 0x80) - 1
                    at_byte, n_chars = chars.tolist(), len(run.decode("utf-8"))
                except UnicodeDecodeError:
                    at_byte, n_chars = list(range(len(run))), len(run)
                for k, c in zip(run_tokens, at_byte):
                    starts[k] = at + c
                at += n_chars
                run.clear()
                run_tokens.clear()
            if t is None:
                break
            part = (self._decoded_first if first and dec.drop_first_spaces else self._decoded)[t].as_py()
            starts.append(at)
            at += len(part.decode("utf-8"))
            first = False
        following = at  # a special token stands where the next part starts, or at the end
        for k in range(len(starts) - 1, -1, -1):
            following = starts[k] = following if starts[k] is None else starts[k]
        if dec.strip_first and at > len(text):  # the leading space Strip took away
            starts = [max(0, x - 1) for x in starts]
        return text, starts

    @staticmethod
    def _first_tokens(ids: pa.LargeListArray) -> pa.Array:
        """Of the flattened ids, which is the first token of its row."""
        starts = pc.subtract(ids.offsets, ids.offsets[0])[:-1]
        position = pa.array(np.arange(len(pc.list_flatten(ids)), dtype=np.int64))
        return pc.equal(position, starts.take(pc.list_parent_indices(ids)))

    def _texts(self, joined: pa.Array, ids: pa.Array) -> pa.Array:
        """The joined bytes as text; only a row that is no UTF-8 is decoded again, by `_decode_row`."""
        try:
            return joined.cast(pa.large_string())
        except pa.ArrowInvalid:
            texts = []
            for k, raw in enumerate(joined.to_pylist()):
                try:
                    texts.append(None if raw is None else raw.decode("utf-8"))
                except UnicodeDecodeError:
                    texts.append(self._decode_row(ids[k].as_py()))
            return pa.array(texts, pa.large_string())

    def _decode_row(self, row: list[int] | None) -> str | None:
        """One row as HF's ByteFallback gives it: each run of byte tokens its UTF-8 text, or one
        U+FFFD per byte when the run is no UTF-8."""
        if row is None:
            return None
        out, run = [], bytearray()
        for i in row + [-1]:
            part = self._decoded[i].as_py() if i >= 0 else b""
            if i >= 0 and self.hf.decoder.byte_fallback and self.model.types[i] == PieceType.BYTE:
                run += part
                continue
            if run:
                try:
                    out.append(run.decode("utf-8"))
                except UnicodeDecodeError:
                    out.append("\ufffd" * len(run))
                run.clear()
            out.append(part.decode("utf-8"))
        return "".join(out)

