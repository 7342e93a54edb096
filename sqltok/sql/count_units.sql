-- Counting, the one relational step every trainer starts from: {split} turns a document's `text`
-- into a list of units (pretokens, supermerge candidates), DuckDB counts each distinct unit. Long
-- documents are first cut into pieces no unit crosses ({pieces}), so that no list grows with a
-- document (unnesting one huge list takes DuckDB time quadratic in its length).
CREATE TEMP TABLE {target} AS
SELECT unit AS {column}, count(*)::BIGINT AS n
FROM (
    SELECT unnest({split}) AS unit
    FROM (SELECT unnest(sqltok_pieces(text, '{pieces}')) AS text FROM ({source}) WHERE text <> '')
)
GROUP BY unit;
