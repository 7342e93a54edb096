-- The source's non-empty documents, long ones cut into pieces no unit crosses (by a mode of
-- `sqltok_pieces`), so that no list of units grows with a document.
SELECT unnest(pieces) AS text
FROM (SELECT sqltok_pieces(text, '{pieces}') AS pieces FROM ({source}) WHERE text <> '')
