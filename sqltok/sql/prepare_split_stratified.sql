-- Validation split stratified by language: within each language (NULL is one more group) the
-- documents are ranked by a hash of the text, and the first round({fraction} * n) are held back, so
-- that each language is held back in its own proportion. {held} as in prepare_split_hash.sql.
SELECT * EXCLUDE (split_rank, split_size) FROM (
    SELECT *, row_number() OVER (PARTITION BY lang ORDER BY hash(text), text) AS split_rank,
           count(*) OVER (PARTITION BY lang) AS split_size
    FROM ({source}))
WHERE (split_rank <= round({fraction} * split_size)) = {held}
