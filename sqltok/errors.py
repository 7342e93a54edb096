"""Errors sqltok raises for bad input, bad arguments and missing things (all are ValueErrors), and the
error of a token id without a token."""
from __future__ import annotations

from collections.abc import Iterable


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


def token_id_error(token_id: int, n_ids: int | None = None) -> OverflowError | UnknownTokenError:
    """The error for a token id without a token, as tiktoken raises it: OverflowError for one that no
    unsigned 32-bit integer holds (what its conversion of the ids raises), else UnknownTokenError.
    `n_ids`: the vocabulary's ids are 0..n_ids-1, said in the message."""
    if not 0 <= token_id < 2**32:
        return OverflowError(f"token id {token_id} is out of range (ids are unsigned 32-bit integers)")
    return UnknownTokenError(f"token id {token_id} is not in this vocabulary"
                             + ("" if n_ids is None else f" (ids 0..{n_ids - 1})"))


def ids_error(ids: Iterable[int], n_ids: int | None = None) -> OverflowError | UnknownTokenError:
    """The error for a row of ids of which one has no token because no int32 holds it: as tiktoken
    converts a row's ids before it decodes them, OverflowError for the first that no unsigned 32-bit
    integer holds, if any, else UnknownTokenError for the first past 2**31 - 1."""
    ids = list(ids)
    outside = [i for i in ids if not 0 <= i < 2**32]
    return token_id_error(outside[0] if outside else next(i for i in ids if i >= 2**31), n_ids)
