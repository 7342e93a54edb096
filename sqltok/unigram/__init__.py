"""Unigram training as SentencePiece 0.2.3 does it: normalization, seed pieces from a suffix array, EM with the digamma M step, pruning, the final vocabulary."""
