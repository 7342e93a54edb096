-- Keep a model's supermerge candidates as lists of pretoken strings (unit ids of the phase-1
-- vocabulary looked up in one list of its tokens).
INSERT INTO sqltok_store.candidate_counts
SELECT ?, list_transform(c.candidate, lambda u: v.tokens[u + 1]), c.n
FROM {source} c, (SELECT list(token ORDER BY id) AS tokens FROM {vocabulary}) v;
