-- The non-empty documents of {source}, whole (for a split that cuts long ones itself).
SELECT text FROM ({source}) WHERE text <> ''
