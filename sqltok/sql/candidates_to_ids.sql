-- A stored model's supermerge candidates (pretoken strings) as token ids of the phase-1 vocabulary
-- at hand; a unit that is no token of it becomes -1 (no unit may be -1: the run is cut there).
CREATE OR REPLACE TEMP TABLE {target} AS
WITH numbered AS (
    SELECT row_number() OVER () AS cid, candidate, n
    FROM sqltok_store.candidate_counts WHERE model = ?
),
units AS (
    SELECT cid, n, unnest(generate_series(1, len(candidate))) AS i, unnest(candidate) AS unit
    FROM numbered
)
SELECT list(coalesce(v.id, -1) ORDER BY units.i) AS candidate, any_value(units.n) AS n
FROM units LEFT JOIN {vocabulary} v ON v.token = units.unit
GROUP BY units.cid;
