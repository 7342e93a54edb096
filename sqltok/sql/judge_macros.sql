-- Judging tokenizers over a corpus: every metric is SQL over the token ids, encoded once per
-- tokenizer. `q` is a query with a VARCHAR column `text` (NULL texts are skipped); `by` names one of
-- its columns to group by (default: each document's dominant Unicode script). Words are what Python's
-- str.split() gives; a word is split when two or more of the document's tokens overlap it (WordPiece,
-- whose tokens are of normalized text: when the word encoded alone gives two or more).

-- The group of document `d` (a row of `q`): its column `by` as text, or its text's dominant script.
CREATE OR REPLACE TEMP MACRO sqltok_document_group(d, "by") AS
    coalesce(CASE WHEN "by" IS NULL THEN dominant_script(d.text) ELSE CAST(struct_extract(d, "by") AS VARCHAR) END,
             '(null)');

-- How often tokenizer `tok` uses each token id over the texts of `q` (lists are unnested from a
-- subquery's column, which takes linear time; see count_units.sql).
CREATE OR REPLACE TEMP MACRO sqltok_token_counts(tok, q) AS TABLE
    SELECT id, count(*) AS n
    FROM (SELECT unnest(ids) AS id FROM (SELECT encode(tok, d.text) AS ids FROM query(q) AS d))
    GROUP BY id;

-- One row per tokenizer and group, and one per tokenizer over all groups ("group" NULL).
-- vocab_size counts every id with a token, special tokens included; the Shannon and Rényi
-- efficiencies divide by log2(vocab_size), not by the log of the number of tokens seen.
-- premium: the group's tokens per byte over the reference group's (same tokenizer). A ratio over
-- nothing (no tokens, no words) is NULL.
CREATE OR REPLACE TEMP MACRO sqltok_evaluate(toks, q, "by" := NULL, alpha := 2.5, reference := NULL) AS TABLE
WITH tokenizers AS (
    SELECT tokenizer, position, sqltok_vocab_size(tokenizer) AS vocab_size
    FROM (SELECT unnest(toks) AS tokenizer, generate_subscripts(toks, 1) AS position)
),
texts AS (
    SELECT sqltok_row.text, sqltok_document_group(sqltok_row, "by") AS grp
    FROM query(q) AS sqltok_row  -- an alias no column is named: a column `d` would stand for the row
    WHERE sqltok_row.text IS NOT NULL
),
docs AS MATERIALIZED (
    SELECT text, grp, strlen(text) AS bytes, length(text) AS characters, sqltok_pretoken_count(text) AS pretokens
    FROM texts
),
group_numbers AS MATERIALIZED (  -- g: the group as a number, which groups and joins faster than its
                                 -- name (numbered apart from the texts: a window over them would sort them)
    SELECT grp, row_number() OVER (ORDER BY grp) AS g FROM (SELECT DISTINCT grp FROM docs)
),
tallied AS MATERIALIZED (  -- each text encoded once per tokenizer: its tokens, words, split words, and
                           -- the distinct ids with their counts of its group's texts in its batch
                           -- (on one of them: many times fewer rows to sum than ids)
    SELECT t.position, n.g, d.bytes, d.characters, d.pretokens, sqltok_tally(t.tokenizer, d.text, n.g) AS c
    FROM docs AS d JOIN group_numbers AS n USING (grp) CROSS JOIN tokenizers AS t
),
per_document AS MATERIALIZED (  -- g 0: all groups
    SELECT position, coalesce(g, 0) AS g, grouping(g) = 1 AS overall,
           count(*) AS documents, sum(bytes)::BIGINT AS bytes, sum(characters)::BIGINT AS characters,
           sum(pretokens)::BIGINT AS pretokens, sum(c.tokens)::BIGINT AS tokens,
           sum(c.words)::BIGINT AS words, sum(c.split)::BIGINT AS split_words,
           avg(c.tokens) AS tokens_per_document_mean, quantile_cont(c.tokens, [0.5, 0.95, 0.99]) AS q,
           max(c.tokens) AS tokens_per_document_max
    FROM tallied
    GROUP BY GROUPING SETS ((position, g), (position))
),
group_frequencies AS MATERIALIZED (
    SELECT position, g, id, sum(n)::BIGINT AS n
    FROM (SELECT position, g, unnest(c.ids) AS id, unnest(c.counts) AS n FROM tallied)
    GROUP BY position, g, id
),
frequencies AS (
    SELECT position, g, id, n FROM group_frequencies
    UNION ALL
    SELECT position, 0, id, sum(n) FROM group_frequencies GROUP BY position, id
),
distribution AS (  -- from each group's sums over its ids (T tokens, n of an id, p = n / T):
                   -- H = log2 T - sum(n log2 n) / T and H_alpha = (log2 sum(n^alpha) - alpha log2 T) / (1 - alpha),
                   -- sum(n^alpha) taken as M^alpha sum((n / M)^alpha), M the largest n: n^alpha itself
                   -- overflows a double (60^200, or 10^7^45) and the entropy came out -inf
    SELECT f.position, f.g, f.distinct_tokens,
           log2(c.tokens) - f.n_log_n / c.tokens AS shannon_entropy,
           CASE WHEN alpha = 1 THEN log2(c.tokens) - f.n_log_n / c.tokens
                ELSE (log2(f.n_pow) + alpha * (log2(f.n_max) - log2(c.tokens))) / (1 - alpha) END AS renyi_entropy
    FROM (SELECT position, g, count(*) AS distinct_tokens, sum(n * log2(n)) AS n_log_n, any_value(m) AS n_max,
                 sum(pow(n / m, alpha)) AS n_pow
          FROM (SELECT *, max(n) OVER (PARTITION BY position, g) AS m FROM frequencies) GROUP BY position, g) AS f
    JOIN per_document AS c USING (position, g)
),
metrics AS (
    SELECT t.tokenizer, CASE WHEN c.overall THEN NULL ELSE n.grp END AS "group", c.overall,
           c.documents, c.bytes, c.characters, c.words, c.pretokens, c.tokens,
           c.bytes / nullif(c.tokens, 0) AS bytes_per_token, c.characters / nullif(c.tokens, 0) AS characters_per_token,
           c.tokens / nullif(c.words, 0) AS fertility, c.split_words / nullif(c.words, 0) AS split_word_share,
           c.tokens_per_document_mean, c.q[1] AS tokens_per_document_p50, c.q[2] AS tokens_per_document_p95,
           c.q[3] AS tokens_per_document_p99, c.tokens_per_document_max,
           t.vocab_size, coalesce(f.distinct_tokens, 0) AS distinct_tokens,
           coalesce(f.distinct_tokens, 0) / t.vocab_size AS vocab_utilization,
           f.shannon_entropy, f.shannon_entropy / log2(t.vocab_size) AS shannon_efficiency,
           f.renyi_entropy, f.renyi_entropy / log2(t.vocab_size) AS renyi_efficiency, alpha::DOUBLE AS renyi_alpha,
           f.distinct_tokens / nullif(c.tokens, 0) AS type_token_ratio,
           c.tokens / nullif(c.bytes, 0) AS tokens_per_byte, t.position
    FROM per_document AS c
    JOIN tokenizers AS t USING (position)
    LEFT JOIN group_numbers AS n ON n.g = c.g
    LEFT JOIN distribution AS f ON f.position = c.position AND f.g = c.g
)
SELECT m.* EXCLUDE (overall, position, tokens_per_byte),
       m.tokens_per_byte / nullif(r.tokens_per_byte, 0) AS premium
FROM metrics AS m
LEFT JOIN metrics AS r ON r.position = m.position AND r."group" = reference
ORDER BY m.position, m.overall DESC, m.bytes DESC, m."group";

-- The token distribution of tokenizer `tok` over the texts of `q`: every token used, with its
-- count, share of all tokens and rank (1 = most frequent; ties by id).
CREATE OR REPLACE TEMP MACRO sqltok_token_frequencies(tok, q) AS TABLE
WITH counts AS (SELECT * FROM sqltok_token_counts(tok, q)),
vocabulary AS (SELECT unnest(sqltok_vocabulary(tok), recursive := true))
SELECT c.id, v.token, v.text, c.n, c.n / sum(c.n) OVER () AS share,
       row_number() OVER (ORDER BY c.n DESC, c.id) AS rank
FROM counts AS c JOIN vocabulary AS v USING (id)
ORDER BY rank;

-- Fragmentation of a list of terms (column `term` of `q`) by each tokenizer of `toks`.
CREATE OR REPLACE TEMP MACRO sqltok_fragmentation(toks, q) AS TABLE
SELECT t.tokenizer, d.term, token_count(t.tokenizer, d.term) AS n_tokens, tokens(t.tokenizer, d.term) AS pieces
FROM query(q) AS d CROSS JOIN (SELECT unnest(toks) AS tokenizer, generate_subscripts(toks, 1) AS position) AS t
ORDER BY t.position, n_tokens DESC, d.term;

-- The paper's Figures 2 and 9 by group: unique and total pretokens of `q`'s texts per group (column
-- `by`, default the dominant script), and, with a phase-1 model `model`, its supermerge candidates.
CREATE OR REPLACE TEMP MACRO sqltok_group_type_token_ratios(q, "by" := NULL, model := NULL) AS TABLE
WITH docs AS MATERIALIZED (
    SELECT sqltok_row.text, sqltok_document_group(sqltok_row, "by") AS grp
    FROM query(q) AS sqltok_row WHERE sqltok_row.text IS NOT NULL
),
units AS (
    SELECT grp, 'pretokens' AS unit, unnest(l) AS u FROM (SELECT grp, pretokenize(text) AS l FROM docs)
    UNION ALL  -- a candidate is a list of token ids; its text form is its identity
    SELECT grp, 'candidates', CAST(unnest(l) AS VARCHAR)
    FROM (SELECT grp, sqltok_candidates(model, text) AS l FROM docs WHERE model IS NOT NULL)
)
SELECT grp AS "group", unit, count(DISTINCT u) AS unique_count, count(*) AS total,
       count(DISTINCT u) / count(*) AS type_token_ratio
FROM units GROUP BY grp, unit ORDER BY grp, unit;
