-- Seed candidates that SentencePiece's suffix tree finds across a sentence boundary: the texts w of
-- {k} characters ending sentences whose following sentences start with at least two different bytes
-- (`followers`: sid, follower; 256 for the end of the corpus), with the count of the sentences they
-- end. The followers of the sentences w ends differ exactly when the least of them ({span}.lo) is
-- below the greatest (hi). Level by level: a w of k characters can branch only where its last k - 1
-- characters do ({previous}, the level before; ignored for k = 2), since they end every sentence w
-- ends; so each level looks at the sentences still branching, and no level holds every ending.
CREATE OR REPLACE TEMP TABLE {target} AS
SELECT right(sentence, {k}) AS w, sum(n)::BIGINT AS n
FROM {sentences} JOIN {span} USING (sid)
WHERE length(sentence) >= {k} AND ({k} = 2 OR right(sentence, {k} - 1) IN (SELECT w FROM {previous}))
GROUP BY w
HAVING min(lo) < max(hi);
