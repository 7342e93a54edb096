-- What a training source holds: documents used, NULL and empty ones skipped, UTF-8 bytes; and how many
-- documents read as text may have been another JSON value (jsonl_doubtful.sql; 0 for other sources).
SELECT count(text) FILTER (WHERE text <> '')          AS documents,
       count(*) - count(text)                         AS null_documents,
       count(*) FILTER (WHERE text = '')              AS empty_documents,
       coalesce(sum(strlen(text)), 0)::BIGINT   AS bytes,
       {doubtful}                                     AS doubtful
FROM ({source});
