-- Greedy left-to-right split of every candidate into its longest frequent n-grams (sizes 2..{size}
-- from the Apriori tables; a pretoken that starts none stays alone), then the pieces re-aggregated.
CREATE OR REPLACE TEMP TABLE {target} AS
WITH RECURSIVE longest AS (
    SELECT cid, i, max(size) AS size FROM ({grams}) GROUP BY cid, i
),
walk(cid, i, size) AS (
    SELECT r.cid, 1, coalesce(l.size, 1)
    FROM {runs} r LEFT JOIN longest l ON l.cid = r.cid AND l.i = 1
    UNION ALL
    SELECT w.cid, w.i + w.size, coalesce(l.size, 1)
    FROM walk w
    JOIN {runs} r ON r.cid = w.cid AND w.i + w.size <= len(r.candidate)
    LEFT JOIN longest l ON l.cid = w.cid AND l.i = w.i + w.size
)
SELECT r.candidate[w.i : w.i + w.size - 1] AS candidate, sum(r.n)::BIGINT AS n
FROM walk w JOIN {runs} r USING (cid)
GROUP BY ALL;
