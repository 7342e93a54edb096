-- Apriori n-gram counting, size {size}: an n-gram is counted only where both of its (n-1)-grams are
-- frequent (two adjacent rows of the previous size), and kept where its count reaches {c_min}. It is
-- known by (id of its first n-1 units, its last unit), so counting groups two integers, not lists.
CREATE OR REPLACE TEMP TABLE {target} AS
WITH spans AS (
    SELECT a.cid, a.i, a.gid AS prefix, b.last, a.w
    FROM {prev} a
    JOIN {prev} b ON b.cid = a.cid AND b.i = a.i + 1
),
frequent AS (
    SELECT prefix, last, row_number() OVER () AS gid
    FROM spans GROUP BY prefix, last HAVING sum(w) >= {c_min}
)
SELECT s.cid, s.i, f.gid, s.last, s.w FROM spans s JOIN frequent f ON f.prefix = s.prefix AND f.last = s.last;
