"""Corpora: where documents come from (files, tables, queries) and how they are prepared for training:
language, scripts, balance, PII, dedup, cleaning, the validation split, the `prepare` pipeline."""
