"""`WordPieceTokenizer`: BERT-family tokenizers (bert-base-uncased, all-MiniLM, bge, ...) with the
same API as `Tokenizer`, ids identical to HF `tokenizers`.

Encoding is HF's pipeline: BertNormalizer, BertPreTokenizer, WordPiece, then the post-processor's
template ([CLS] ... [SEP]); `encode` treats special-token text as text, `encode_special` (SQL) and
`allowed_special` match it as HF does. Decoding is HF's `decode` (WordPiece decoder, special tokens
skipped).
"""
from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from sqltok.wordpiece._encode import WordPieceEncoder
from sqltok.errors import SqltokError
from sqltok.wordpiece.files import WordPieceSpec, read_vocab_txt, read_wordpiece_json
from sqltok.formats.kind import TokenizerFile
from sqltok.threads import default_threads
from sqltok.tokenizer import AllowedSpecial, Tokenizer, text_array

#: HF WordPiece decoder's cleanup: spaces that tokenization put before punctuation and contractions.
CLEANUP = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
           (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]


def _cleanup(text: str) -> str:
    for dirty, clean in CLEANUP:
        text = text.replace(dirty, clean)
    return text


class WordPieceTokenizer(Tokenizer):
    """A loaded WordPiece tokenizer; build one with `Tokenizer.load(path)` (tokenizer.json or
    vocab.txt) or `WordPieceTokenizer.load(vocab_txt, lowercase=False, ...)` with vocab.txt options."""

    file_kinds = ("hf-wordpiece", "vocab-txt")

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
            [t.encode() for t in first], [t.encode() for t in later], list(self._special_by_id))
        self._token_strings = pa.array(spec.tokens, pa.large_string())  # tokens() shows them as HF does
        self._token_bytes = self._token_strings.cast(pa.large_binary())

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
        if allowed is None:
            return self._encoder.encode_arrow(texts, threads, counts_only)
        ids = self._encode_specials(texts, allowed, threads)
        return pc.list_value_length(ids).cast(pa.int64()) if counts_only else ids

    def _encode_specials(self, texts: pa.Array, allowed, threads: int) -> pa.Array:
        """Ids with special-token text matched as HF does: in the rows that hold some, the text
        between special tokens is encoded piece by piece and the template put around the whole."""
        before, after = self.spec.single
        return self._with_specials(texts, self._encoder.encode_arrow(texts, threads, False), allowed,
                                   lambda parts: self._encoder.encode_arrow(parts, 1, False, False), before, after)

    def decode_arrow(self, ids: pa.Array, errors: str = "replace") -> pa.Array:
        """Texts (large_string) of a list<integer> array, as HF's `decode` gives them."""
        return self._encoder.decode_arrow(ids)

    # -- Python API --------------------------------------------------------------------------------
    def encode_pair_arrow(self, texts: pa.Array, pairs: pa.Array, threads: int | None = None,
                          counts_only: bool = False) -> pa.Array:
        """Ids (list<int32>) or counts of sequence pairs, as the post-processor's pair template puts
        them ([CLS] a [SEP] b [SEP]: cross-encoders, rerankers); NULL when either side is NULL;
        special-token text is text."""
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
        return self._encoder.token_bytes(token)

