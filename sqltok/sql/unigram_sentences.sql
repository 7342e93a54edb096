-- Normalized sentences ({source}: rid, sentence, n), the lines that normalize to the same text
-- counted together with an id each and the ids of their lines; lines that normalize to nothing are
-- dropped, as spm_train drops them.
CREATE TEMP TABLE {target} AS
SELECT sentence, n, rids, (row_number() OVER () - 1)::BIGINT AS sid
FROM (SELECT sentence, sum(n)::BIGINT AS n, list(rid) AS rids FROM {source} WHERE sentence <> '' GROUP BY sentence);
