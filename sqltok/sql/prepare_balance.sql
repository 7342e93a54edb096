-- Balancing by language over a query q with columns doc_id, lang, text.

-- Documents and bytes per language, largest first, with their shares.
CREATE OR REPLACE TEMP MACRO sqltok_language_shares(q) AS TABLE
SELECT lang, count(*) AS documents, coalesce(sum(strlen(text)), 0) AS bytes,
       count(*) / sum(count(*)) OVER () AS doc_share,
       coalesce(sum(strlen(text)) / sum(sum(strlen(text))) OVER (), 0) AS byte_share
FROM query(q) GROUP BY lang ORDER BY documents DESC, lang NULLS LAST;

-- Target shares p(lang) ∝ n^alpha of the languages found (mT5's and XLM-R's sampling), as a MAP.
CREATE OR REPLACE TEMP MACRO sqltok_temperature_targets(q, alpha) AS (
    SELECT map(list(lang ORDER BY lang), list(pow(n, alpha) ORDER BY lang))
    FROM (SELECT lang, count(*) AS n FROM query(q) WHERE lang IS NOT NULL GROUP BY lang));

-- Resampling toward target weights (a MAP lang -> weight > 0; normalized over the languages found):
-- each language in it gets want = round(share * N) documents, N the documents with a language;
-- languages not in it are dropped, documents without a language pass through once. Within a language
-- the documents are ranked by a hash of (doc_id, seed); copy k of the document of rank r is kept when
-- k * n + r < want: downsampling without replacement, oversampling by whole repeats plus a
-- deterministic remainder. The column `copy` numbers the repeats (0 first).
CREATE OR REPLACE TEMP MACRO sqltok_balance(q, targets, seed := 0) AS TABLE
WITH docs AS (SELECT * FROM query(q)),
counts AS (SELECT lang, count(*) AS n FROM docs WHERE lang IS NOT NULL GROUP BY lang),
asked AS (SELECT e.key AS lang, e.value AS weight FROM (SELECT unnest(map_entries(targets)) AS e)),
wanted AS (  -- the names the documents' rows are given here are sqltok_...: q's own columns may be n, r, ...
    SELECT c.lang, c.n AS sqltok_n,
           round(a.weight / sum(a.weight) OVER () * (SELECT sum(n) FROM counts))::BIGINT AS sqltok_want
    FROM counts c JOIN asked a USING (lang)),
ranked AS (
    SELECT d.*, w.sqltok_n, w.sqltok_want,
           row_number() OVER (PARTITION BY d.lang ORDER BY hash(d.doc_id, seed)) - 1 AS sqltok_r
    FROM docs d JOIN wanted w USING (lang))
SELECT * EXCLUDE (sqltok_n, sqltok_want, sqltok_r, sqltok_k), sqltok_k AS copy
FROM ranked, range(((sqltok_want + sqltok_n - 1) // sqltok_n)::BIGINT) c(sqltok_k)
WHERE sqltok_k * sqltok_n + sqltok_r < sqltok_want
UNION ALL BY NAME
SELECT *, 0 AS copy FROM docs WHERE lang IS NULL;
