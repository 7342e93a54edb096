-- Resampling toward target shares by language. {targets} is a query of (lang, share) whose shares sum
-- to 1; the documents of each language in it are resampled to want = round(share * N), N the
-- documents with a language; languages not in it are dropped, documents without a language pass
-- through once. Within a language the documents are ranked by a hash of (doc_id, {seed}); copy k of
-- the document of rank r is kept when k * n + r < want: downsampling without replacement,
-- oversampling by whole repeats plus a deterministic remainder. `copy` numbers the repeats (0 first).
WITH docs AS (SELECT * FROM ({source})),
counts AS (SELECT lang, count(*) AS n FROM docs WHERE lang IS NOT NULL GROUP BY lang),
wanted AS (
    SELECT c.lang, c.n, round(t.share * (SELECT sum(n) FROM counts))::BIGINT AS want
    FROM counts c JOIN ({targets}) t USING (lang)),
ranked AS (
    SELECT d.*, w.n, w.want, row_number() OVER (PARTITION BY d.lang ORDER BY hash(d.doc_id, {seed})) - 1 AS r
    FROM docs d JOIN wanted w USING (lang))
SELECT * EXCLUDE (n, want, r, k), k AS copy
FROM ranked, range(((want + n - 1) // n)::BIGINT) c(k)
WHERE k * n + r < want
UNION ALL BY NAME
SELECT *, 0 AS copy FROM docs WHERE lang IS NULL
