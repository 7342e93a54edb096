-- The distinct lines SentencePiece's trainer reads from a corpus, each with its count and the
-- numbers of the lines it is (in corpus order, from 0): each document's lines (a document is
-- cut into pieces of whole lines first, so that no list grows with it), without empty lines, lines
-- longer than {max_length} bytes and lines that hold the unknown mark U+2585, which spm_train skips.
-- No table holds every line: memory follows the distinct lines.
CREATE TEMP TABLE {target} AS
SELECT line, count(*)::BIGINT AS n, list(line_no) AS line_nos
FROM (
    SELECT row_number() OVER () - 1 AS line_no, line
    FROM (
        SELECT unnest(string_split(piece, chr(10))) AS line
        FROM (SELECT unnest(sqltok_pieces(text, 'lines')) AS piece FROM ({source}) WHERE text <> '')
    )
    WHERE line <> '' AND strlen(line) <= {max_length} AND NOT contains(line, '▅')
)
GROUP BY line;
