-- Supermerge candidates of a source: the Cython extractor lists each document's maximal runs of
-- pretokens that the phase-1 model made single tokens (materialized first: DuckDB aggregates a
-- Python UDF's nested output several times slower in the same statement), then DuckDB counts them.
CREATE OR REPLACE TEMP TABLE __sqltok_candidate_runs AS
SELECT unnest(sqltok_candidates({tokenizer}, text)) AS candidate
FROM ({source})
WHERE text <> '';

CREATE OR REPLACE TEMP TABLE {target} AS
SELECT candidate, count(*)::BIGINT AS n FROM __sqltok_candidate_runs GROUP BY candidate;

DROP TABLE __sqltok_candidate_runs;
