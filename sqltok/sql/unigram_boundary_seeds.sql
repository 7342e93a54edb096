-- Seed candidates that SentencePiece's suffix tree finds across a sentence boundary: the text w
-- ending sentences whose following sentences start with at least two different bytes (`followers`:
-- sid, follower; 256 for the end of the corpus), with the count of the sentences it ends.
WITH ends AS (
    SELECT sid, n, unnest(list_transform(range(2, least(length(sentence), {max_length}) + 1),
                                         lambda k: right(sentence, k::BIGINT))) AS w
    FROM {sentences}
),
branching AS (
    SELECT w FROM ends JOIN {followers} USING (sid) GROUP BY w HAVING count(DISTINCT follower) >= 2
)
SELECT w, sum(n)::BIGINT AS n FROM ends SEMI JOIN branching USING (w) GROUP BY w;
