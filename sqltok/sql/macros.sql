-- Scalar macros over sqltok's functions; `register` creates them for the connection (TEMP).
-- pretokenize(text [, simple := true]) -> VARCHAR[]: the GPT-4o pattern, script-aware unless simple.
CREATE OR REPLACE TEMP MACRO pretokenize(text, simple := false) AS
    CASE WHEN simple THEN sqltok_pretokenize_simple(text) ELSE sqltok_pretokenize_script(text) END;

-- Token ids in narrower or unsigned lists, for storage (an id that does not fit is an error).
CREATE OR REPLACE TEMP MACRO encode_usmallint(m, text) AS CAST(encode(m, text) AS USMALLINT[]);
CREATE OR REPLACE TEMP MACRO encode_uinteger(m, text) AS CAST(encode(m, text) AS UINTEGER[]);

-- sqltok_load(name, path [, pattern := NULL]): load a tokenizer file as `name` (`pattern`: the
-- pre-tokenization pattern of a .tiktoken file that is not a standard one).
CREATE OR REPLACE TEMP MACRO sqltok_load(name, path, pattern := NULL) AS sqltok_load_file(name, path, pattern);
