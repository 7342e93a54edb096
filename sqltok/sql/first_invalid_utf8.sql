-- The 1-based number of the first document whose BLOB is not valid UTF-8 (NULL when all are).
SELECT min(doc) FROM (
    SELECT row_number() OVER () AS doc, text FROM ({source})
) WHERE text IS NOT NULL AND try(decode(text)) IS NULL;
