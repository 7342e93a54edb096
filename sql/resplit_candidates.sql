-- Candidates of a smaller phase-1 model from those of a larger one: a unit stays eligible only when
-- the smaller model still encodes it to one token, so every candidate is cut at the units that are
-- not, and the runs of two or more that remain are counted again.
CREATE OR REPLACE TEMP TABLE {target} AS
WITH numbered AS (
    SELECT row_number() OVER () AS cid, candidate, n FROM {source}
),
units AS (
    SELECT cid, n, unnest(generate_series(1, len(candidate))) AS i, unnest(candidate) AS unit
    FROM numbered
),
eligible AS (
    SELECT unit FROM (SELECT DISTINCT unit FROM units) WHERE token_count({tokenizer}, unit) = 1
),
runs AS (
    SELECT cid, n, i, unit, eligible.unit IS NOT NULL AS ok,
           sum(CASE WHEN eligible.unit IS NULL THEN 1 ELSE 0 END)
               OVER (PARTITION BY cid ORDER BY i) AS run
    FROM units LEFT JOIN eligible USING (unit)
),
pieces AS (
    SELECT list(unit ORDER BY i) AS candidate, any_value(n) AS n
    FROM runs WHERE ok
    GROUP BY cid, run
    HAVING count(*) >= 2
)
SELECT candidate, sum(n)::BIGINT AS n FROM pieces GROUP BY candidate;
