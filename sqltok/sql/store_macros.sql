-- Table macros over the model store; `register` creates them for the connection (TEMP).
CREATE OR REPLACE TEMP MACRO sqltok_tokens(m) AS TABLE
    SELECT id, token, count, is_super
    FROM sqltok_store.tokens WHERE model = m ORDER BY id;

CREATE OR REPLACE TEMP MACRO sqltok_merges(m) AS TABLE
    SELECT mg.idx, l.token AS left_token, r.token AS right_token, t.token AS token,
           mg.count, mg.flag, mg.is_super, mg.left_id, mg.right_id, mg.new_id
    FROM sqltok_store.merges mg
    JOIN sqltok_store.tokens l ON l.model = mg.model AND l.id = mg.left_id
    JOIN sqltok_store.tokens r ON r.model = mg.model AND r.id = mg.right_id
    JOIN sqltok_store.tokens t ON t.model = mg.model AND t.id = mg.new_id
    WHERE mg.model = m
    ORDER BY mg.is_super, mg.idx;

CREATE OR REPLACE TEMP MACRO sqltok_pretoken_counts(m) AS TABLE
    SELECT pretoken, n FROM sqltok_store.pretoken_counts WHERE model = m;

-- A two-phase model's supermerge candidates as the text of their pretokens (they are stored as ids
-- of its phase-1 vocabulary).
CREATE OR REPLACE TEMP MACRO sqltok_candidate_counts(m) AS TABLE
    SELECT list_transform(c.candidate, lambda u: v.texts[u + 1]) AS candidate, c.n
    FROM sqltok_store.candidate_counts c,
         (SELECT list(try(decode(token)) ORDER BY id) AS texts FROM sqltok_store.phase1_tokens WHERE model = m) v
    WHERE c.model = m;

-- What aggregating by count saves (the paper's Figures 2 and 9): unique and total pretokens and
-- supermerge candidates of a model's training corpus, and their type-token ratios.
CREATE OR REPLACE TEMP MACRO sqltok_type_token_ratios(m) AS TABLE
    SELECT 'pretokens' AS unit, count(*) AS unique_count, sum(n)::BIGINT AS total,
           count(*) / sum(n) AS type_token_ratio
    FROM sqltok_store.pretoken_counts WHERE model = m
    UNION ALL
    SELECT 'candidates', count(*), sum(n)::BIGINT, count(*) / sum(n)
    FROM sqltok_store.candidate_counts WHERE model = m;

CREATE OR REPLACE TEMP MACRO sqltok_special_tokens(m) AS TABLE
    SELECT id, token FROM sqltok_store.special_tokens WHERE model = m ORDER BY id;

CREATE OR REPLACE TEMP MACRO sqltok_models() AS TABLE
    SELECT model, method, vocab_size, script_aware, documents, bytes, source, created
    FROM sqltok_store.models ORDER BY model;
