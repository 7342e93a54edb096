"""DuckDB functions over Arrow batches: thin wrappers that hand Arrow buffers to the Cython code, one
module per family of SQL functions."""
import duckdb

from sqltok.named_tokenizers import instance_key, named_tokenizers
from sqltok.udfs import bert_words, candidates, encode, judge, normalize, pairs, pieces, prepare, pretokenize
from sqltok.udfs.define import define_instance_key


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Every sqltok UDF on `con`'s database instance, unless another connection defined them."""
    reg = named_tokenizers(con)
    if instance_key(con) is not None:
        return
    pretokenize.register(con)
    pieces.register(con)
    encode.register(con)
    candidates.register(con)
    normalize.register(con)
    bert_words.register(con)
    pairs.register(con)
    judge.register(con)
    prepare.register(con)
    define_instance_key(con, reg.key)
