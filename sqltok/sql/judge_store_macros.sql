-- Judging macros over the model store (`register` creates them when the database has one).

-- Candidates for under-trained ("glitch") tokens of `tok` over `q` (Land and Bartolo 2024): tokens
-- that never occur, and, for models in the store, tokens seen fewer than 1/factor of the times their
-- final training count promises (expected = trained_count / all trained counts * tokens of `q`).
-- merge_count: the largest pair count among the merges that made the token. Special tokens left out.
CREATE OR REPLACE TEMP MACRO sqltok_unused_tokens(tok, q, factor := 10) AS TABLE
WITH counts AS (SELECT * FROM sqltok_token_counts(tok, q)),
vocabulary AS (SELECT unnest(sqltok_vocabulary(tok), recursive := true)),
trained AS (SELECT id, count AS trained_count FROM sqltok_store.tokens WHERE model = tok),
merged AS (SELECT new_id AS id, max(count) AS merge_count FROM sqltok_store.merges WHERE model = tok GROUP BY new_id),
seen AS (
    SELECT v.id, v.token, v.text, coalesce(c.n, 0) AS n, t.trained_count, m.merge_count,
           t.trained_count / sum(t.trained_count) OVER () * sum(coalesce(c.n, 0)) OVER () AS expected
    FROM vocabulary AS v
    LEFT JOIN counts AS c USING (id) LEFT JOIN trained AS t USING (id) LEFT JOIN merged AS m USING (id)
    WHERE NOT v.special
)
SELECT id, token, text, n, trained_count, merge_count, expected, n / expected AS observed_over_expected
FROM seen
WHERE n = 0 OR n * factor < expected
ORDER BY n / expected NULLS FIRST, expected DESC NULLS LAST, id;

-- The paper's Figure 10: each merge's pair count against its index in its phase's list, regular
-- merges and supermerges apart.
CREATE OR REPLACE TEMP MACRO sqltok_merge_curve(m) AS TABLE
SELECT CASE WHEN is_super THEN 'super' ELSE 'regular' END AS kind, idx, count, token
FROM sqltok_merges(m)
ORDER BY is_super, idx;
