-- bert_normalize(text [, clean_text := true, handle_chinese_chars := true, strip_accents := NULL,
-- lowercase := true]) -> VARCHAR: HF's BertNormalizer, with its defaults (strip_accents NULL follows
-- lowercase).
CREATE OR REPLACE TEMP MACRO bert_normalize(text, clean_text := true, handle_chinese_chars := true,
                                            strip_accents := NULL, lowercase := true) AS
    sqltok_bert_normalize(text, clean_text, handle_chinese_chars, coalesce(strip_accents, lowercase), lowercase);
