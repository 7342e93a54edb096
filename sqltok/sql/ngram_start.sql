-- Apriori n-gram counting (paper Appendix B, Algorithm 2), size 1: number the candidates and keep
-- the positions whose unit occurs at least {c_min} times over all candidates. A gram is known by an
-- id (for size 1, the unit itself); every row also carries the gram's last unit and the weight.
CREATE OR REPLACE TEMP TABLE {runs} AS
SELECT row_number() OVER () AS cid, candidate, n FROM {candidates};

CREATE OR REPLACE TEMP TABLE {grams} AS
WITH units AS (
    SELECT cid, unnest(generate_series(1, len(candidate))) AS i, unnest(candidate) AS unit, n
    FROM {runs}
),
frequent AS (
    SELECT unit FROM units GROUP BY unit HAVING sum(n) >= {c_min}
)
SELECT cid, i, unit::BIGINT AS gid, unit AS last, n AS w FROM units SEMI JOIN frequent USING (unit);
