-- Counting, the one relational step every trainer starts from: {split} turns a document's `text`
-- into a list of units (pretokens, supermerge candidates), DuckDB counts each distinct unit.
CREATE TEMP TABLE {target} AS
SELECT unit AS {column}, count(*)::BIGINT AS n
FROM (
    SELECT unnest({split}) AS unit
    FROM ({source})
    WHERE text <> ''
)
GROUP BY unit;
