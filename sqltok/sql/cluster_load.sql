-- The coordinator's copy of the reduced counts: every partition's file in one work table.
CREATE TEMP TABLE {target} AS
SELECT {column}, n FROM read_parquet({files}, hive_partitioning = false);
