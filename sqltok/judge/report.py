"""`sqltok report`: a folder that judges tokenizers over a corpus at a glance. `index.html` (opens
without a network) holds the metrics table and the plots (PNG, with SVG beside them); every table is
written as CSV and Parquet too."""
from __future__ import annotations

import html
import math
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Sequence

import duckdb
import pyarrow as pa

from sqltok.corpus.sources import Source, quote_literal
from sqltok.duck import arrow_table
from sqltok.judge.formatting import SHOWN, cell, notes
from sqltok.judge.metrics import documents_query, evaluate, records
from sqltok.store import model_names

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; font-size: .85em; } th, td { padding: .25em .6em; border-bottom: 1px solid #ddd; }
td { text-align: right; } td:nth-child(-n+2), th:nth-child(-n+2) { text-align: left; }
tr.all td { font-weight: 600; background: #f4f6f8; }
figure { margin: 1.5em 0; } figcaption { color: #555; font-size: .9em; } img { max-width: 100%; }
.note { color: #8a5a00; }
"""


def _tables(con: duckdb.DuckDBPyConnection, names: list[str], source: Source, by: str | None) -> dict[str, pa.Table]:
    """The tables behind the plots: tokens per document, token frequencies, the share of tokens of
    each length in bytes, and the merge curves of the stored models among `names`."""
    q = quote_literal(documents_query(con, source, by))
    toks = "[" + ", ".join(quote_literal(n) for n in names) + "]"
    per_doc = arrow_table(con, f"""
        SELECT t.tokenizer, sqltok_document_group(sqltok_row, {quote_literal(by) if by else "NULL"}) AS "group",
               sqltok_row.sqltok_doc AS doc, token_count(t.tokenizer, sqltok_row.text) AS tokens
        FROM (SELECT *, row_number() OVER () AS sqltok_doc FROM query({q}) WHERE text IS NOT NULL) AS sqltok_row
        CROSS JOIN (SELECT unnest({toks}) AS tokenizer) AS t ORDER BY t.tokenizer, doc""")
    freqs = pa.concat_tables([arrow_table(con, f"""
        SELECT {quote_literal(n)} AS tokenizer, id, token, text, octet_length(token) AS token_bytes, n, share, rank
        FROM sqltok_token_frequencies({quote_literal(n)}, {q})""") for n in names])
    con.register("sqltok_report_frequencies", freqs)
    try:
        lengths = arrow_table(con, """
            SELECT tokenizer, token_bytes, sum(n)::BIGINT AS tokens,
                   sum(n) / sum(sum(n)) OVER (PARTITION BY tokenizer) AS share
            FROM sqltok_report_frequencies GROUP BY tokenizer, token_bytes ORDER BY tokenizer, token_bytes""")
    finally:
        con.unregister("sqltok_report_frequencies")
    stored = [n for n in names if n in set(model_names(con))]
    curves = pa.concat_tables([arrow_table(con, f"SELECT {quote_literal(n)} AS model, kind, idx, count "
                                                f"FROM sqltok_merge_curve({quote_literal(n)})") for n in stored]) \
        if stored else pa.table({"model": pa.array([], pa.string()), "kind": pa.array([], pa.string()),
                                 "idx": pa.array([], pa.int32()), "count": pa.array([], pa.int64())})
    return {"tokens_per_document": per_doc, "token_frequencies": freqs, "token_lengths": lengths,
            "merge_curves": curves}


def _pyplot() -> ModuleType:
    """matplotlib's pyplot on the Agg backend, imported when a report is drawn: importing it takes about
    as long as `import sqltok`, which every CLI command (and every importer of `sqltok.judge`) paid."""
    import_module("matplotlib").use("Agg")
    return import_module("matplotlib.pyplot")


def _save(fig, out: Path, name: str) -> str:
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out / f"{name}.{ext}", dpi=120)
    _pyplot().close(fig)
    return name


def _plots(out: Path, rows: list[dict], tables: dict[str, pa.Table], names: list[str], by: str | None) -> list[tuple[str, str]]:
    """(file stem, caption) of every plot written."""
    plt = _pyplot()
    with plt.rc_context({"text.parse_math": False}):  # group and tokenizer names are text, not mathtext
        return _draw(plt, out, rows, tables, names, by)


def _draw(plt, out: Path, rows: list[dict], tables: dict[str, pa.Table], names: list[str],
          by: str | None) -> list[tuple[str, str]]:
    made = []
    groups = [r["group"] for r in rows if r["group"] is not None and r["tokenizer"] == names[0]]
    fig, ax = plt.subplots(figsize=(min(12, max(7, 0.25 * len(groups) * len(names) + 2)), 4.5))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        values = {r["group"]: r["bytes_per_token"] for r in rows if r["tokenizer"] == name}
        ax.bar([i + k * width for i in range(len(groups))],
               [values.get(g) if values.get(g) is not None else math.nan for g in groups], width, label=name)
    ax.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(groups))], groups, rotation=45, ha="right")
    ax.set(title="Compression by group (higher is better)", ylabel="bytes per token",
           xlabel=f"group ({by})" if by else "group (dominant Unicode script)")
    ax.legend()
    made.append((_save(fig, out, "bytes_per_token"), "Bytes per token in each group, one bar per tokenizer."))

    per_doc = tables["tokens_per_document"].to_pylist()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.boxplot([[r["tokens"] for r in per_doc if r["tokenizer"] == n] for n in names], showfliers=True)
    ax.set_xticks(range(1, len(names) + 1), names)
    ax.set(title="Tokens per document", ylabel="tokens per document", xlabel="tokenizer")
    made.append((_save(fig, out, "tokens_per_document"),
                 "Distribution of tokens per document (box: quartiles, whiskers: 1.5 IQR, dots: outliers)."))

    lengths = tables["token_lengths"].to_pylist()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in names:
        pts = [(r["token_bytes"], r["share"]) for r in lengths if r["tokenizer"] == n]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=n)
    ax.set(title="Token lengths in the corpus", xlabel="token length (bytes)", ylabel="share of tokens")
    ax.legend()
    made.append((_save(fig, out, "token_lengths"), "Share of the corpus's tokens by token length in bytes."))

    freqs = tables["token_frequencies"].to_pylist()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in names:
        counts = [r["n"] for r in freqs if r["tokenizer"] == n]
        ax.loglog(range(1, len(counts) + 1), counts, label=n)
    ax.set(title="Rank-frequency (Zipf) plot", xlabel="rank of token (log)", ylabel="occurrences (log)")
    ax.legend()
    made.append((_save(fig, out, "zipf"), "Token occurrences against their rank, log-log."))

    curves = tables["merge_curves"].to_pylist()
    if curves:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for model in dict.fromkeys(r["model"] for r in curves):
            for kind, style in (("regular", "-"), ("super", "--")):
                pts = [(r["idx"], r["count"]) for r in curves if r["model"] == model and r["kind"] == kind]
                if pts:
                    ax.semilogy([p[0] for p in pts], [p[1] for p in pts], style, label=f"{model} ({kind})")
        ax.set(title="Merge counts (superword paper, Figure 10)", xlabel="merge index in its phase",
               ylabel="pair count when merged (log)")
        ax.legend()
        made.append((_save(fig, out, "merge_curves"),
                     "Each merge's pair count against its index; regular merges solid, supermerges dashed."))
    return made


def _write_table(con: duckdb.DuckDBPyConnection, table: pa.Table, out: Path, name: str) -> None:
    con.register("sqltok_report_table", table)
    try:
        for fmt in ("csv", "parquet"):
            con.execute(f"COPY sqltok_report_table TO {quote_literal(str(out / f'{name}.{fmt}'))} (FORMAT {fmt})")
    finally:
        con.unregister("sqltok_report_table")


def _metrics_html(rows: list[dict]) -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in SHOWN)
    body = []
    for r in rows:
        cells = "".join(f"<td>{html.escape('(all)' if k == 'group' and r[k] is None else cell(r[k]))}</td>"
                        for k, _ in SHOWN)
        body.append(f'<tr class="{"all" if r["group"] is None else "group"}">{cells}</tr>')
    return (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            + "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes(rows)))


def write_report(con: duckdb.DuckDBPyConnection, tokenizers: Sequence[str], source: Source, out: str | Path,
                 by: str | None = None, alpha: float = 2.5, reference: str | None = None) -> Path:
    """Write the report folder `out` (created if needed); returns the path of its index.html."""
    out = Path(out)
    metrics = evaluate(con, tokenizers, source, by=by, alpha=alpha, reference=reference)
    rows = records(metrics)
    names = list(dict.fromkeys(r["tokenizer"] for r in rows))
    tables = {"metrics": metrics, **_tables(con, names, source, by)}
    out.mkdir(parents=True, exist_ok=True)  # once the tables are made: a bad tokenizer or corpus leaves no folder
    for name, table in tables.items():
        _write_table(con, table, out, name)
    plots = _plots(out, rows, tables, names, by)
    figures = "".join(f'<figure><img src="{stem}.png" alt="{html.escape(caption)}"><figcaption>{html.escape(caption)} '
                      f'<a href="{stem}.svg">SVG</a></figcaption></figure>' for stem, caption in plots)
    if not tables["merge_curves"].num_rows:
        figures += "<p>No merge curves: none of these tokenizers is a model stored in the database.</p>"
    links = " · ".join(f'{name}: <a href="{name}.csv">CSV</a> <a href="{name}.parquet">Parquet</a>'
                       for name in tables)
    premium = f"relative to group {html.escape(reference)}" if reference else "none: no --reference group given"
    page = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sqltok report</title>'
            f"<style>{STYLE}</style></head><body><h1>sqltok report: {html.escape(', '.join(names))}</h1>"
            f"<p>Corpus: {html.escape(source.describe())}; groups: {html.escape(by or 'dominant Unicode script')}; "
            f"Rényi order α = {alpha:g}; tokenization premium {premium}. Efficiencies divide by log2 of each "
            f"tokenizer's vocabulary size.</p><h2>Metrics</h2>{_metrics_html(rows)}<h2>Plots</h2>{figures}"
            f"<h2>Tables</h2><p>{links}</p></body></html>")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
