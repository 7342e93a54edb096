"""The validation split, shared by `sqltok prepare --valid` and `sqltok train --holdout`: a document
is held back by a hash of its text (deterministic; copies of a document stay together), stratified by
language when the documents carry one. The split is the table macros of `sql/prepare_split.sql`, which
need `sqltok.register(con)`."""
from __future__ import annotations

from sqltok.corpus.sources import quote_literal
from sqltok.errors import SqltokError


def split_query(source: str, fraction: float, held: bool, by_language: bool = False) -> str:
    """The rows of `source` (a query with a `text` column, and `lang` when `by_language`) on the held-back
    side (`held`) or the training side of a split that holds back about `fraction` of them."""
    if not 0.0 < fraction < 1.0:
        raise SqltokError(f"the held-back fraction must be between 0 and 1, not {fraction}")
    macro = "sqltok_split_by_language" if by_language else "sqltok_split"
    return (f"SELECT * EXCLUDE (sqltok_held) FROM {macro}({quote_literal(source)}, fraction := {float(fraction)!r}) "
            f"WHERE {'' if held else 'NOT '}sqltok_held")
