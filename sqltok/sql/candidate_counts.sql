-- Supermerge candidates of a source: the Cython extractor lists each document's maximal runs of
-- pretokens that the phase-1 model made single tokens (as lists of token ids); DuckDB counts them.
CREATE TEMP TABLE {target} AS
SELECT candidate, count(*)::BIGINT AS n
FROM (
    SELECT unnest(sqltok_candidates({tokenizer}, text)) AS candidate
    FROM ({source})
    WHERE text <> ''
)
GROUP BY candidate;
