-- Validation split by a hash of the text: deterministic, one pass, and duplicates of a document land
-- on the same side (no leakage). A document is held back when it has text and hash(text) % 10000 <
-- {cut}; {held} is true for the held-back side, false for the training side.
SELECT * FROM ({source})
WHERE coalesce(hash(text) % 10000 < {cut}, false) = {held}
