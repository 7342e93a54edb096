-- Deduplication as table macros over a query with columns doc_id and text.

-- The LSH banding (bands, rows per band) for a Jaccard threshold with num_perm MinHash values: the
-- one with the least false positive + false negative area (equal weights), as MinHashLSH chooses it,
-- the areas integrated by the trapezoid rule on 2,000 steps.
CREATE OR REPLACE TEMP MACRO sqltok_lsh_bands(threshold, num_perm := 128) AS TABLE
WITH shapes AS (
    SELECT b.b AS bands, r.r AS rows FROM range(1, num_perm + 1) b(b), range(1, num_perm + 1) r(r)
    WHERE b.b * r.r <= num_perm),
grid AS (SELECT i / 2000 AS s, CASE WHEN i IN (0, 2000) THEN 0.5 ELSE 1.0 END AS w FROM range(0, 2001) g(i)),
err AS (
    SELECT bands, rows,
           sum(w * CASE WHEN s <= threshold THEN 1 - pow(1 - pow(s, rows), bands) ELSE 0 END)
               / 2000 AS false_positive,
           sum(w * CASE WHEN s >= threshold THEN pow(1 - pow(s, rows), bands) ELSE 0 END)
               / 2000 AS false_negative
    FROM shapes, grid
    WHERE s <= threshold OR s >= threshold
    GROUP BY bands, rows)
SELECT bands, rows FROM err ORDER BY false_positive + false_negative, bands, rows LIMIT 1;

-- Exact duplicates: documents whose text is the same once lowercased and with runs of whitespace
-- made one space (equal 64-bit fingerprints of their words: two different texts collide with odds
-- of about n^2 / 2^65 for n documents). One row per document of a group of two or more: its cluster
-- is the group's smallest doc_id, and `keep` marks that one.
CREATE OR REPLACE TEMP MACRO sqltok_exact_duplicates(q) AS TABLE
WITH keyed AS (SELECT doc_id, text_fingerprint(lower(text)) AS key FROM query(q) WHERE text IS NOT NULL),
grouped AS (SELECT doc_id, min(doc_id) OVER (PARTITION BY key) AS cluster,
                   count(*) OVER (PARTITION BY key) AS size FROM keyed)
SELECT doc_id, cluster, doc_id = cluster AS keep FROM grouped WHERE size > 1;

-- Near-duplicate pairs (x < y): MinHash over word n-gram shingles of the lowercased text, LSH bands
-- chosen for the threshold, two documents a pair when one of their bands is equal (MinHashLSH's
-- candidates). Documents without words take no part.
CREATE OR REPLACE TEMP MACRO sqltok_near_duplicate_pairs(q, threshold := 0.8, num_perm := 128, seed := 1,
                                                        ngram := 5) AS TABLE
WITH shape AS (SELECT * FROM sqltok_lsh_bands(threshold, num_perm)),
signed AS (
    SELECT doc_id, minhash(lower(text), num_perm, seed, ngram) AS sig FROM query(q) WHERE text IS NOT NULL),
keys AS (
    SELECT doc_id, band, hash(sig[band * rows + 1 : (band + 1) * rows]) AS key
    FROM signed, shape, range(bands) t(band)
    WHERE list_min(sig) < 4294967295)
SELECT DISTINCT a.doc_id AS x, b.doc_id AS y
FROM keys a JOIN keys b ON a.band = b.band AND a.key = b.key AND a.doc_id < b.doc_id;

-- Near duplicates: the connected components of sqltok_near_duplicate_pairs. One row per document of
-- a cluster: its cluster is the cluster's smallest doc_id, and `keep` marks that one.
CREATE OR REPLACE TEMP MACRO sqltok_near_duplicates(q, threshold := 0.8, num_perm := 128, seed := 1,
                                                   ngram := 5) AS TABLE
WITH RECURSIVE
pairs AS (SELECT * FROM sqltok_near_duplicate_pairs(q, threshold := threshold, num_perm := num_perm,
                                                    seed := seed, ngram := ngram)),
links AS (SELECT x AS node, y AS other FROM pairs UNION ALL SELECT y, x FROM pairs),
components(node, cluster) USING KEY (node) AS (
    SELECT node, least(node, min(other)) FROM links GROUP BY node
    UNION
    SELECT l.node, min(c.cluster) FROM components c JOIN links l ON l.other = c.node
    JOIN recurring.components r ON r.node = l.node
    GROUP BY l.node HAVING min(c.cluster) < min(r.cluster))
SELECT node AS doc_id, cluster, node = cluster AS keep FROM components;
