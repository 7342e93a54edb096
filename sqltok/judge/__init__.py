"""Judging tokenizers: metrics over corpora, token frequencies, training curves, reports, a viewer.

    from sqltok.judge import evaluate, token_frequencies, write_report, view_html
    evaluate(con, ["o200k_base.tiktoken", "my_bpe"], sqltok.Source(path="valid.parquet"), by="lang")
"""
from sqltok.judge.curves import group_type_token_ratios, merge_curve
from sqltok.judge.frequencies import fragmentation, token_frequencies, unused_tokens
from sqltok.judge.metrics import evaluate, records
from sqltok.judge.report import write_report
from sqltok.judge.viewer import view_html

__all__ = ["evaluate", "fragmentation", "group_type_token_ratios", "merge_curve", "records", "token_frequencies",
           "unused_tokens", "view_html", "write_report"]
