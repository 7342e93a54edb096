-- Candidates kept as pretoken text (stores written before candidates were ids) become lists of ids
-- of the phase-1 vocabulary in phase1_tokens, which the caller filled for every model that has
-- candidates; a unit with no such token keeps NULL (the caller refuses that). Runs in one transaction.
CREATE TABLE sqltok_store.candidate_ids (
    model     VARCHAR NOT NULL,
    candidate INTEGER[] NOT NULL,
    n         BIGINT NOT NULL
);

INSERT INTO sqltok_store.candidate_ids
WITH numbered AS (
    SELECT row_number() OVER () AS cid, model, candidate, n FROM sqltok_store.candidate_counts
),
units AS (
    SELECT cid, model, n, unnest(generate_series(1, len(candidate))) AS i, unnest(candidate) AS unit
    FROM numbered
),
vocabulary AS (
    SELECT model, id, try(decode(token)) AS text FROM sqltok_store.phase1_tokens
)
SELECT any_value(u.model), list(v.id ORDER BY u.i), any_value(u.n)
FROM units u LEFT JOIN vocabulary v ON v.model = u.model AND v.text = u.unit
GROUP BY u.cid;

DROP TABLE sqltok_store.candidate_counts;
ALTER TABLE sqltok_store.candidate_ids RENAME TO candidate_counts;
