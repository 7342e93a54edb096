"""WordPiece (BERT): the encoder and its files (HF tokenizer.json, vocab.txt)."""
