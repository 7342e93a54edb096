-- The map side of counting on a cluster: one shard's unit counts, cut into {partitions} Parquet
-- partitions by a hash of the unit (DuckDB's hash is the same in every process of one version), so
-- that one reduce task sums all shards' counts of one partition.
COPY (SELECT {column}, n, (hash({column}) % {partitions})::INTEGER AS part FROM {counts})
TO {folder} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (part));
