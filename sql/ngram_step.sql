-- Apriori n-gram counting, size {size}: an n-gram is counted only where both of its (n-1)-grams are
-- frequent (two adjacent rows of the previous size), and kept where its count reaches {c_min}.
CREATE OR REPLACE TEMP TABLE __sqltok_grams_{size} AS
WITH spans AS (
    SELECT a.cid, a.i, r.candidate[a.i : a.i + {size} - 1] AS gram, r.n
    FROM __sqltok_grams_{prev} a
    JOIN __sqltok_grams_{prev} b ON b.cid = a.cid AND b.i = a.i + 1
    JOIN __sqltok_runs r ON r.cid = a.cid
),
frequent AS (
    SELECT gram FROM spans GROUP BY gram HAVING sum(n) >= {c_min}
)
SELECT cid, i FROM spans SEMI JOIN frequent USING (gram);
