"""Corpora: where documents come from (files, tables, queries) and how they are split."""
