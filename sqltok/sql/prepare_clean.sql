-- Cleaning: the text decoded ({decode}: the text itself, or the UTF-8 decoding of a BLOB, NULL where
-- invalid unless fixed), control characters other than tab, line feed and carriage return removed
-- (C0, DEL, C1), the normal form applied ({normalize}), and documents outside [{min_chars},
-- {max_chars}] characters dropped (NULL and empty documents always). Other columns are carried through.
WITH decoded AS (SELECT * REPLACE ({decode} AS text) FROM ({source})),
stripped AS (
    SELECT * REPLACE (regexp_replace(text, '[\x00-\x08\x0B\x0C\x0E-\x1F\x7F\x{{80}}-\x{{9F}}]', '', 'g') AS text)
    FROM decoded),
normal AS (SELECT * REPLACE ({normalize} AS text) FROM stripped)
SELECT * FROM normal WHERE text IS NOT NULL AND length(text) BETWEEN greatest({min_chars}, 1) AND {max_chars}
