-- The source's non-empty documents, whole (for a split that cuts long ones itself).
SELECT text FROM ({source}) WHERE text <> ''
