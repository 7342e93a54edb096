-- Counting when {split} gives each batch of documents its distinct units with their counts (list of
-- struct(unit, n), see `sqltok_pretoken_counts`): the counts of each distinct unit summed. Otherwise
-- as count_units.sql (long documents first cut into pieces no unit crosses; each list unnested from a
-- subquery's column).
CREATE TEMP TABLE {target} AS
SELECT {value} AS {column}, n
FROM (
    SELECT counted.unit AS unit, sum(counted.n)::BIGINT AS n
    FROM (
        SELECT unnest(units) AS counted
        FROM (SELECT {split} AS units
              FROM (SELECT unnest(pieces) AS text
                    FROM (SELECT sqltok_pieces(text, '{pieces}') AS pieces FROM ({source}) WHERE text <> '')))
    )
    GROUP BY counted.unit
);
