-- Candidates of a smaller phase-1 model from those of a larger one: a unit stays only when it is
-- eligible under the smaller model (table {eligible}), so every candidate is cut at the units that
-- are not, and the runs of two or more that remain are counted again.
CREATE OR REPLACE TEMP TABLE {target} AS
WITH numbered AS (
    SELECT row_number() OVER () AS cid, candidate, n FROM {source}
),
units AS (
    SELECT cid, n, unnest(generate_series(1, len(candidate))) AS i, unnest(candidate) AS unit
    FROM numbered
),
runs AS (
    SELECT u.cid, u.n, u.i, u.unit, e.unit IS NOT NULL AS ok,
           sum(CASE WHEN e.unit IS NULL THEN 1 ELSE 0 END) OVER (PARTITION BY u.cid ORDER BY u.i) AS run
    FROM units u LEFT JOIN {eligible} e ON e.unit = u.unit
),
pieces AS (
    SELECT list(unit ORDER BY i) AS candidate, any_value(n) AS n
    FROM runs WHERE ok
    GROUP BY cid, run
    HAVING count(*) >= 2
)
SELECT candidate, sum(n)::BIGINT AS n FROM pieces GROUP BY candidate;
