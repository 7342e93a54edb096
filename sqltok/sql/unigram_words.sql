-- The words of the sentences ({source}: sentence, n), cut where whitespace (U+2581) starts or ends a
-- word ({pattern} matches one word): each distinct (word, whether it is its sentence's last) with
-- how often it occurs so, counted over the sentences, ordered by the words' bytes.
SELECT word, last, sum(n)::BIGINT AS n
FROM (
    SELECT unnest(words) AS word, unnest(range(len(words))) = len(words) - 1 AS last, n
    FROM (SELECT regexp_extract_all(sentence, '{pattern}') AS words, n FROM {source})
)
GROUP BY word, last
ORDER BY encode(word), last;
