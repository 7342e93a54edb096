-- The lines SentencePiece's trainer reads from a corpus, numbered in order: each document's lines
-- (a document is cut into pieces of whole lines first, so that no list grows with it), without
-- empty lines, lines longer than {max_length} bytes and lines that hold the unknown mark U+2585,
-- which spm_train skips. {distinct} gets each distinct line once with its count and an id.
CREATE TEMP TABLE {target} AS
SELECT row_number() OVER () AS line_no, line
FROM (
    SELECT unnest(string_split(piece, chr(10))) AS line
    FROM (SELECT unnest(sqltok_pieces(text, 'lines')) AS piece FROM ({source}) WHERE text <> '')
)
WHERE line <> '' AND strlen(line) <= {max_length} AND NOT contains(line, '▅');

CREATE TEMP TABLE {distinct} AS
SELECT line, n, (row_number() OVER () - 1)::BIGINT AS rid
FROM (SELECT line, count(*)::BIGINT AS n FROM {target} GROUP BY line);
