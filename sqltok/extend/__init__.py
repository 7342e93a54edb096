"""Extending a byte-level BPE vocabulary with merges learned on a new corpus (see `extend.py`)."""
