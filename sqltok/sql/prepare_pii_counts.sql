-- PII found by kind in a table with a column pii_kinds (the kinds of each document's finds).
SELECT kind, count(*) AS n FROM (SELECT unnest(pii_kinds) AS kind FROM {table}) GROUP BY kind ORDER BY kind
