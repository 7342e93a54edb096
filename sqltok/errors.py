"""Errors sqltok raises for bad input, bad arguments and missing things (all are ValueErrors)."""


class SqltokError(ValueError):
    """Base class: a clear message about what was wrong and how to fix it."""


class CorpusError(SqltokError):
    """A training source that cannot be read as documents."""


class ModelNotFoundError(SqltokError, KeyError):
    """No model of that name in the database."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0] if self.args else ""


class ModelExistsError(SqltokError):
    """A model of that name exists already (pass replace=True / --replace)."""


class UnknownTokenError(SqltokError, KeyError):
    """A token id (or token) the vocabulary does not have; a KeyError, as tiktoken raises."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0] if self.args else ""


class ShardError(CorpusError):
    """A shard of a source that a cluster task could not read or count; the message names it."""
