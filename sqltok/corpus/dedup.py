"""Deduplication: exact (a fingerprint of the lowercased text's words) and near-duplicate (MinHash
over word 5-gram shingles, LSH bands chosen for the threshold, clusters by connected components).

The work is the table macros of `sql/prepare_dedup.sql` over the `minhash` and `text_fingerprint`
SQL functions (`_minhash.pyx`); this module holds their Python faces and the MinHash permutations.
The candidates are MinHashLSH's: pairs with one equal band, not checked again against the threshold,
so a cluster may chain documents less alike than the threshold (as in datatrove and text-dedup).
Shingles are of words between whitespace: text without spaces (Chinese, Japanese, Thai) makes few,
long words, so near copies there are found only when nearly equal.
"""
from __future__ import annotations

from functools import cache

import duckdb
import numpy as np

from sqltok.errors import SqltokError


@cache
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The `num_perm` permutations h -> a h + b mod 2^32 of MinHash seed `seed`: (a, b), a odd."""
    if not 1 <= num_perm <= 4096:
        raise SqltokError(f"num_perm must be between 1 and 4096, not {num_perm}")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = rng.integers(0, 1 << 32, num_perm, dtype=np.uint64).astype(np.uint32)
    a.flags.writeable = b.flags.writeable = False
    return a, b


def _check(threshold: float) -> None:
    if not 0.0 < threshold < 1.0:
        raise SqltokError(f"the similarity threshold must be between 0 and 1, not {threshold}")


def lsh_bands(con: duckdb.DuckDBPyConnection, threshold: float, num_perm: int = 128) -> tuple[int, int]:
    """(bands, rows per band) for `threshold` with `num_perm` MinHash values."""
    _check(threshold)
    return con.execute("SELECT bands, rows FROM sqltok_lsh_bands(?, num_perm := ?)", [threshold, num_perm]).fetchone()


def near_duplicates(con: duckdb.DuckDBPyConnection, query: str, threshold: float = 0.8, num_perm: int = 128,
                    seed: int = 1, ngram: int = 5) -> duckdb.DuckDBPyRelation:
    """(doc_id, cluster, keep) for every document of `query` (columns doc_id, text) in a near-duplicate
    cluster; `keep` is the cluster's smallest doc_id."""
    _check(threshold)
    permutations(num_perm, seed)
    return con.sql("SELECT * FROM sqltok_near_duplicates($q, threshold := $t, num_perm := $n, seed := $s, "
                   "ngram := $g)", params={"q": query, "t": threshold, "n": num_perm, "s": seed, "g": ngram})


def exact_duplicates(con: duckdb.DuckDBPyConnection, query: str) -> duckdb.DuckDBPyRelation:
    """(doc_id, cluster, keep) for every document of `query` (columns doc_id, text) with an exact
    duplicate; `keep` is the group's smallest doc_id."""
    return con.sql("SELECT * FROM sqltok_exact_duplicates($q)", params={"q": query})
