-- The JSONL values that a VARCHAR read may have turned from another JSON type into text: an object or
-- an array (as one line of JSON: DuckDB writes no raw line break in one), a number (digits, '.', 'e'
-- and signs; NaN and Infinity too), true or false. A source none of whose documents could be one holds
-- strings only.
count(*) FILTER (WHERE (left(text, 1) IN ('{', '[') AND NOT contains(text, chr(10)) AND json_valid(text))
                 OR text IN ('true', 'false', 'NaN', 'Infinity', '-Infinity')
                 OR regexp_full_match(text, '-?[0-9][0-9.eE+-]*'))
