-- Normalized sentences ({source}: rid, sentence, n), the lines that normalize to the same text
-- counted together with an id each; lines that normalize to nothing are dropped, as spm_train drops
-- them.
CREATE TEMP TABLE {target} AS
SELECT sentence, n, (row_number() OVER () - 1)::BIGINT AS sid
FROM (SELECT sentence, sum(n)::BIGINT AS n FROM {source} WHERE sentence <> '' GROUP BY sentence);
