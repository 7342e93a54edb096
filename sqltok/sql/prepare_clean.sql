-- Cleaning: the text decoded ({decode}: the text itself, or the UTF-8 decoding of a BLOB, NULL where
-- invalid unless fixed), control characters removed (strip_controls), the normal form applied
-- ({normalize}), and documents outside [{min_chars}, {max_chars}] characters dropped (NULL and empty
-- documents always). Other columns are carried through.
WITH decoded AS (SELECT * REPLACE ({decode} AS text) FROM ({source})),
stripped AS (SELECT * REPLACE (strip_controls(text) AS text) FROM decoded),
normal AS (SELECT * REPLACE ({normalize} AS text) FROM stripped)
SELECT * FROM normal WHERE text IS NOT NULL AND length(text) BETWEEN greatest({min_chars}, 1) AND {max_chars}
