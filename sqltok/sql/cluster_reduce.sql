-- The reduce side of counting on a cluster: the counts of one hash partition from every shard,
-- summed (integer sums are exact and order-free: the same counts as one process gives).
COPY (SELECT {column}, sum(n)::BIGINT AS n FROM read_parquet({files}, hive_partitioning = false) GROUP BY {column})
TO {output} (FORMAT parquet, COMPRESSION zstd);
