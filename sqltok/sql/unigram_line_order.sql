-- The sentence id of each line in corpus order (-1 for the lines that normalized to nothing).
SELECT coalesce(s.sid, -1) AS sid
FROM {lines} JOIN {distinct} USING (line) JOIN {normalized} USING (rid) LEFT JOIN {sentences} s USING (sentence)
ORDER BY line_no;
