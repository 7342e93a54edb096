-- PII found by kind in a table with a column sqltok_pii_kinds (the kinds of each document's finds).
SELECT kind, count(*) AS n FROM (SELECT unnest(sqltok_pii_kinds) AS kind FROM {table}) GROUP BY kind ORDER BY kind
