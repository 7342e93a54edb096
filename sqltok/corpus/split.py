"""The validation split, shared by `sqltok prepare --valid` and `sqltok train --holdout`: a document
is held back by a hash of its text (deterministic; copies of a document stay together), stratified by
language when the documents carry one."""
from __future__ import annotations

from sqltok.errors import SqltokError
from sqltok.sql_files import sql_text


def split_query(source: str, fraction: float, held: bool, by_language: bool = False) -> str:
    """The rows of `source` (a query with a `text` column, and `lang` when `by_language`) on the held-back
    side (`held`) or the training side of a split that holds back about `fraction` of them."""
    if not 0.0 < fraction < 1.0:
        raise SqltokError(f"the held-back fraction must be between 0 and 1, not {fraction}")
    flag = "true" if held else "false"
    if by_language:
        return sql_text("prepare_split_stratified").format(source=source, fraction=float(fraction), held=flag)
    return sql_text("prepare_split_hash").format(source=source, cut=int(round(fraction * 10000)), held=flag)
