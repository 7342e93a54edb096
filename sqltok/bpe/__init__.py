"""Byte-level BPE: the model, its trainers (BPE, BoundlessBPE, SuperBPE), its encoder and its files
(`.tiktoken`, HF tokenizer.json, the reference's `.model`)."""
