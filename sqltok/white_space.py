"""Unicode's White_Space characters: what Rust's `char::is_whitespace` (HF `tokenizers`, tiktoken)
splits on. Python's `str.isspace` differs (it also takes U+001C..U+001F)."""
WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                        + "\u2028\u2029\u202f\u205f\u3000")
