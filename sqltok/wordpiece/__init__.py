"""WordPiece (BERT): the encoder, its files (HF tokenizer.json, vocab.txt) and its trainer."""
