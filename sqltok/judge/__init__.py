"""Judging tokenizers: metrics over corpora, token frequencies, training curves, reports, a viewer."""
