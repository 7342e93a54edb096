-- Seed candidates that SentencePiece's suffix tree finds across a sentence boundary, those of {k}
-- characters: the texts w ending sentences whose following sentences start with at least two
-- different bytes ({sentences}: sid, sentence, n, and lo, hi, the least and the greatest first byte
-- of the sentences after it, 256 for the end of the corpus), each row a sentence w ends (sid, w, n).
-- Level by level: a w of k characters can branch only where its last k - 1 characters do, since they
-- end every sentence w ends; so each level looks only at the sentences whose ending branched at the
-- level before ({alive}; every sentence for k = 2), and no level holds every ending.
CREATE OR REPLACE TEMP TABLE {target} AS
WITH ends AS MATERIALIZED (
    SELECT sid, right(sentence, {k}) AS w, n, lo, hi
    FROM {sentences}
    WHERE ({k} = 2 OR sid IN (SELECT sid FROM {alive})) AND length(sentence) >= {k}
)
SELECT sid, w, n FROM ends
WHERE w IN (SELECT w FROM ends GROUP BY w HAVING min(lo) < max(hi));
