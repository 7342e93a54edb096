"""How the metrics table is shown to people: which columns, under which short labels, with how many
digits (the terminal table of `sqltok evaluate` and the report's HTML table)."""
from __future__ import annotations

import math

#: The columns `sqltok evaluate` shows in the terminal (the JSON lines carry every column).
SHOWN = (("tokenizer", "tokenizer"), ("group", "group"), ("documents", "docs"), ("bytes", "bytes"),
         ("tokens", "tokens"), ("bytes_per_token", "bytes/tok"), ("characters_per_token", "chars/tok"),
         ("fertility", "tok/word"), ("split_word_share", "split"), ("tokens_per_document_p50", "doc p50"),
         ("tokens_per_document_p95", "doc p95"), ("tokens_per_document_max", "doc max"),
         ("vocab_utilization", "vocab use"), ("shannon_efficiency", "shannon"), ("renyi_efficiency", "renyi"),
         ("premium", "premium"))


def cell(value) -> str:
    """A number for people: NaN (None) spelled out, floats to three places, thousands separated."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def format_table(rows: list[dict]) -> str:
    """The metrics as an aligned text table; the over-all-groups row of a tokenizer says `(all)`."""
    cells = [[label for _, label in SHOWN]]
    for row in rows:
        cells.append([group_label(row) if key == "group" else cell(row[key]) for key, _ in SHOWN])
    widths = [max(len(r[i]) for r in cells) for i in range(len(SHOWN))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in cells]
    return "\n".join(lines + notes(rows))


def group_label(row: dict) -> str:
    """The row's group, `(all)` for a tokenizer's row over all groups."""
    return "(all)" if row["group"] is None else str(row["group"])


def notes(rows: list[dict]) -> list[str]:
    """The notes of the rows that have one (a group without tokens), once each."""
    return sorted({f"{r['tokenizer']} / {group_label(r)}: {r['note']}" for r in rows if "note" in r})
