-- The non-empty documents of {source}, long ones cut into pieces no unit crosses ({pieces}, a mode
-- of `sqltok_pieces`), so that no list of units grows with a document.
SELECT unnest(pieces) AS text
FROM (SELECT sqltok_pieces(text, '{pieces}') AS pieces FROM ({source}) WHERE text <> '')
