-- The validation split, shared by `sqltok prepare --valid` and `sqltok train --holdout`: every row of
-- the query q (a `text` column) with a column sqltok_held, true for the held-back side.

-- By a hash of the text: deterministic, one pass, and copies of a document land on the same side (no
-- leakage). A document is held back when it has text and hash(text) % 10000 < fraction * 10000.
CREATE OR REPLACE TEMP MACRO sqltok_split(q, fraction := 0.01) AS TABLE
SELECT *, coalesce(hash(text) % 10000 < round(fraction * 10000), false) AS sqltok_held FROM query(q);

-- Stratified by language (a `lang` column; NULL is one more group): within each language the
-- documents are ranked by a hash of the text and the first round(fraction * n) held back, so that
-- each language is held back in its own proportion. Copies share the rank of the first (rank(), not
-- row_number()): the cut never falls between the copies balancing made, which stay on one side.
CREATE OR REPLACE TEMP MACRO sqltok_split_by_language(q, fraction := 0.01) AS TABLE
SELECT * EXCLUDE (sqltok_split_rank, sqltok_split_size),
       sqltok_split_rank <= round(fraction * sqltok_split_size) AS sqltok_held
FROM (SELECT *, rank() OVER (PARTITION BY lang ORDER BY hash(text), text) AS sqltok_split_rank,
             count(*) OVER (PARTITION BY lang) AS sqltok_split_size
      FROM query(q));
