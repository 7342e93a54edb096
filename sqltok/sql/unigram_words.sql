-- The words EM trains on: each sentence ({source}: sentence, n) cut where whitespace (U+2581) starts a
-- word ({pattern} matches one word), counted over the sentences, in SentencePiece's order: the most
-- frequent first, ties by their bytes.
SELECT word, sum(n)::BIGINT AS n
FROM (SELECT unnest(regexp_extract_all(sentence, '{pattern}')) AS word, n FROM {source})
GROUP BY word
ORDER BY n DESC, encode(word);
