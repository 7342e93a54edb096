"""Errors raised by the model file readers, writers and exporters."""
from sqltok.errors import SqltokError


class ModelFormatError(SqltokError):
    """A model file is corrupt, truncated or uses a feature sqltok does not support."""


class ExportError(SqltokError):
    """A model cannot be exported to a target format without changing how it encodes."""


class UnsupportedTokenizerError(ModelFormatError):
    """A valid tokenizer file that uses a feature sqltok's encoder cannot reproduce exactly
    (the message names the feature)."""
