"""`WordPieceTokenizer`: BERT-family tokenizers (bert-base-uncased, all-MiniLM, bge, ...) with the
same API as `Tokenizer`, ids identical to HF `tokenizers`.

Encoding is HF's pipeline: BertNormalizer, BertPreTokenizer, WordPiece, then the post-processor's
template ([CLS] ... [SEP]); `encode` treats special-token text as text, `encode_special` (SQL) and
`allowed_special` match it as HF does; HF's non-special added tokens are always matched, and added
tokens with HF's flags matched as HF does (`sqltok.added_rows`). Decoding is HF's `decode` (WordPiece decoder, special tokens
skipped unless `skip_special_tokens=False`).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from sqltok.added_rows import AddedRows
from sqltok.normalizers._normalize import bert_normalize_arrow
from sqltok.wordpiece._encode import WordPieceDirect, WordPieceEncoder
from sqltok.errors import SqltokError
from sqltok.formats.errors import UnsupportedTokenizerError
from sqltok.wordpiece.files import WordPieceSpec, read_vocab_txt, read_wordpiece_json
from sqltok.formats.kind import TokenizerFile
from sqltok.threads import default_threads
from sqltok.token_offsets import EncodedText
from sqltok.tokenizer import AllowedSpecial, Tokenizer, require_str, text_array
from sqltok.wordpiece.offsets import wordpiece_offsets

#: HF WordPiece decoder's cleanup: spaces that tokenization put before punctuation and contractions.
CLEANUP = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
           (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]


def _cleanup(text: str) -> str:
    for dirty, clean in CLEANUP:
        text = text.replace(dirty, clean)
    return text


class WordPieceTokenizer(Tokenizer, WordPieceDirect):
    """A loaded WordPiece tokenizer; build one with `Tokenizer.load(path)` (tokenizer.json or
    vocab.txt) or `WordPieceTokenizer.load(vocab_txt, lowercase=False, ...)` with vocab.txt options."""

    file_kinds = ("hf-wordpiece", "vocab-txt")
    skips_special_tokens = True  # HF's decode default

    def __init__(self, spec: WordPieceSpec) -> None:
        super().__init__(spec.name, spec.special_tokens)
        self.spec = spec
        self.pattern = "BertPreTokenizer"
        self.normalizer = None if spec.normalizer is None else "BertNormalizer"
        vocab = {t: i for i, t in enumerate(spec.tokens)}
        first, later = [], []
        for token in spec.tokens:
            if spec.decoder is None:
                first.append(token)
                later.append(" " + token)
                continue
            prefix, cleanup = spec.decoder
            rest = token[len(prefix):] if token.startswith(prefix) else " " + token
            first.append(_cleanup(token) if cleanup else token)
            later.append(_cleanup(rest) if cleanup else rest)
        self._encoder = WordPieceEncoder(
            [t.encode() for t in spec.tokens], spec.prefix.encode(), vocab[spec.unk_token],
            spec.max_input_chars_per_word, spec.normalizer, list(spec.single), list(spec.pair),
            [t.encode() for t in first], [t.encode() for t in later], list(self._special_by_id),
            [(s.encode(), i) for s, i in self._special_tokens.items()], -1 if spec.n_model is None else spec.n_model)
        self._added = self._added_rows(spec)
        self._token_strings = pa.array(spec.tokens, pa.large_string())  # tokens() shows them as HF does
        self._token_bytes = self._token_strings.cast(pa.large_binary())
        self._decoded_pieces = (first, later)  # what each id adds to decoded text, first or after another
        self._pickle_as = (type(self), (spec,))

    def _added_rows(self, spec: WordPieceSpec) -> AddedRows | None:
        """The added-token path, for a tokenizer with non-special added tokens or HF's flags."""
        if not spec.added_tokens and not spec.added_flags:
            return None
        switches = spec.normalizer
        normalize = None if switches is None else lambda texts: bert_normalize_arrow(texts, *switches)
        self._normalize_segments = normalize
        self._plain_encoder = None  # the segments' encoder after `normalize`: built when first needed
        return AddedRows(spec.special_tokens, spec.added_tokens, spec.added_flags,
                         None if normalize is None else lambda text: normalize(pa.array([text]))[0].as_py())

    def _encode_normalized(self, texts: pa.Array, threads: int) -> pa.Array:
        """Texts normalized already, encoded by this vocabulary without the normalizer."""
        if self._plain_encoder is None:
            spec = self.spec
            self._plain_encoder = WordPieceEncoder(
                [t.encode() for t in spec.tokens], spec.prefix.encode(), spec.tokens.index(spec.unk_token),
                spec.max_input_chars_per_word, None, [[], []], [[], [], []], [], [], [], [],
                -1 if spec.n_model is None else spec.n_model)
        return self._plain_encoder.encode_arrow(texts, threads, False, False)

    @classmethod
    def from_file(cls, file: TokenizerFile, name: str | None = None, **options) -> "WordPieceTokenizer":
        """From a sniffed WordPiece tokenizer.json or vocab.txt (`options` for a vocab.txt only)."""
        if file.kind == "hf-wordpiece":
            if options:
                raise TypeError("options apply to a vocab.txt; a tokenizer.json carries its own")
            return cls(read_wordpiece_json(file.path, name, file.document))
        if file.kind == "vocab-txt":
            return cls(read_vocab_txt(file.path, name, **options))
        raise SqltokError(f"{file.path} is {file.describe()}, not a WordPiece tokenizer.json or vocab.txt")

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id."""
        return self._encoder.n_vocab

    # -- Arrow (what the SQL functions call) -------------------------------------------------------
    def encode_arrow(self, texts: pa.Array, allowed_special: AllowedSpecial = (), threads: int | None = None,
                     counts_only: bool = False) -> pa.Array:
        """Ids (list<int32>) or token counts (int64) of a string array, the post-processor's tokens
        included; NULL stays NULL."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        threads = threads or default_threads()
        allowed = self._allowed_ids(allowed_special)
        if self._added is not None:
            ids = self._added.encode(texts, allowed, lambda segments: self._encoder.encode_arrow(
                segments, threads, False, False), self._normalize_segments,
                lambda parts: self._encode_normalized(parts, threads), *self.spec.single)
        elif allowed is None:
            return self._encoder.encode_arrow(texts, threads, counts_only)
        else:
            ids = self._encode_specials(texts, allowed, threads)
        return pc.list_value_length(ids).cast(pa.int64()) if counts_only else ids

    def _encode_specials(self, texts: pa.Array, allowed, threads: int) -> pa.Array:
        """Ids with special-token text matched as HF does (see `_with_specials`), in the rows that
        hold some."""
        return self._rows_with_specials(texts, self._encoder.encode_arrow(texts, threads, False), allowed,
                                        lambda text: self._with_specials(text, allowed))

    def _with_specials(self, text: str, allowed) -> list[int]:
        """Ids of one text whose allowed special tokens are matched as HF does: the text between them
        encoded piece by piece, the template put around the whole."""
        before, after = self.spec.single
        return self._split_encode(text, allowed, lambda parts: self._encoder.encode_strs(parts, False), before, after)

    def decode_arrow(self, ids: pa.Array, errors: str = "replace",
                     skip_special_tokens: bool | None = None) -> pa.Array:
        """Texts (large_string) of a list<integer> array, as HF's `decode(ids, skip_special_tokens)` gives them."""
        return self._encoder.decode_arrow(ids, self._skips(skip_special_tokens))

    # -- the direct path (Python str in, Python objects out) ---------------------------------------
    def _encode_texts(self, texts: list[str], allowed_special: AllowedSpecial, counts_only: bool = False) -> list:
        if self._added is not None:
            return super()._encode_texts(texts, allowed_special, counts_only)
        allowed = self._allowed_ids(allowed_special)
        if allowed is None:
            try:
                return self._encoder.encode_strs(texts, True, counts_only)
            except UnicodeEncodeError:  # (a surrogate: the error that says so)
                return self._encoder.encode_strs(self._utf8_texts(texts), True, counts_only)
        pat = self._special_pattern(allowed)
        texts = self._utf8_texts(texts)
        ids = self._encoder.encode_strs(texts, True, False)  # most texts hold no special-token text
        for r, text in enumerate(texts):
            if pat is not None and pat.search(text):
                ids[r] = self._with_specials(text, allowed)
        return [len(x) for x in ids] if counts_only else ids

    def _encode_text(self, text: str, allowed_special: AllowedSpecial, counts_only: bool = False) -> list[int] | int:
        if allowed_special or self._added is not None:
            return self._encode_texts([text], allowed_special, counts_only)[0]
        try:
            return self._encoder.encode_str(text, True, counts_only)
        except UnicodeEncodeError:  # (a surrogate: the error that says so)
            return self._encoder.encode_str(self._utf8_texts([text])[0], True, counts_only)

    encode = WordPieceDirect.encode  # `Tokenizer.encode`, one call to the encoder for the usual policies

    def _generic_encode(self, text: str, allowed_special: AllowedSpecial,
                        disallowed_special: AllowedSpecial) -> list[int]:
        """The base class's `encode`, for what `WordPieceDirect.encode` leaves to it."""
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def decode(self, ids: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool | None = None) -> str:
        """`Tokenizer.decode` in one call to the encoder."""
        return self._encoder.decode_text(ids, errors, self._skips(skip_special_tokens))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """`Tokenizer.decode_bytes` in one call to the encoder: the UTF-8 of `decode`."""
        return self._encoder.decode_ids(ids)

    # -- Python API --------------------------------------------------------------------------------
    def encode_pair_arrow(self, texts: pa.Array, pairs: pa.Array, threads: int | None = None,
                          counts_only: bool = False) -> pa.Array:
        """Ids (list<int32>) or counts of sequence pairs, as the post-processor's pair template puts
        them ([CLS] a [SEP] b [SEP]: cross-encoders, rerankers); NULL when either side is NULL;
        special-token text is text."""
        if self._added is not None and self._added.always:
            raise UnsupportedTokenizerError(f"{self.name}: pairs with the non-special added tokens of a tokenizer.json")
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if isinstance(pairs, pa.ChunkedArray):
            pairs = pairs.combine_chunks()
        return self._encoder.encode_arrow(texts, threads or default_threads(), counts_only, True, pairs)

    def encode_pair(self, text: str, pair: str) -> list[int]:
        """Ids of one sequence pair (HF `encode(text, pair)`, special-token text treated as text)."""
        return self.encode_pair_arrow(text_array([text]), text_array([pair]), 1)[0].as_py()

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The UTF-8 bytes of one token as the vocabulary spells it ("##ing")."""
        return self._encoder.token_bytes(operator.index(token))  # (Cython's int32_t would take 2.5 as 2)

    # -- tiktoken's and HF's API beyond encode and decode ------------------------------------------
    def vocabularies(self) -> tuple[dict[str, int], dict[str, int]]:
        """(model vocabulary, added tokens) as HF holds them: every token as written ("##ing"), and
        the special tokens."""
        return ({t: i for i, t in enumerate(self.spec.tokens[:self.spec.n_model])},
                {**self._special_tokens, **self.spec.added_tokens})

    def encode_with_offsets(self, text: str) -> EncodedText:
        """`encode(text)` (special-token text as text) with HF's character offsets of each token into
        the original text (the normalizer's changes undone; [CLS] and [SEP] are (0, 0))."""
        text = require_str([text])[0]
        ids = self.encode(text, disallowed_special=())
        return EncodedText(ids, wordpiece_offsets(self.spec, text, ids))

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """`decode(tokens)` (HF's decoder) and the character index where each token's part starts in
        it (a special token, which decodes to nothing, at the index where it stands)."""
        tokens = list(tokens)  # any iterable of ids, as tiktoken's
        first, later = self._decoded_pieces
        text = self.decode(tokens)
        offsets, at, started = [], 0, False
        for t in tokens:
            offsets.append(at)
            if t not in self._special_by_id:
                piece = later[t] if started else first[t]
                started = True
                at += len(piece)
        return text, offsets
