-- Split a source into training and held-back documents by a hash of the text: deterministic, one
-- pass, and duplicates of a document land on the same side (no leakage). {keep} is 'train' or 'held'.
SELECT text FROM ({source})
WHERE CASE WHEN '{keep}' = 'held' THEN text IS NOT NULL AND hash(text) % 10000 < {cut}
           ELSE text IS NULL OR hash(text) % 10000 >= {cut} END
