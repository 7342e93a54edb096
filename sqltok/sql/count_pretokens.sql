-- Pretoken counts of a source: the Cython pretokenizer splits each document, DuckDB counts.
CREATE TEMP TABLE {target} AS
SELECT pretoken, count(*)::BIGINT AS n
FROM (
    SELECT unnest({pretokenize}(text)) AS pretoken
    FROM ({source})
    WHERE text <> ''
)
GROUP BY pretoken;
