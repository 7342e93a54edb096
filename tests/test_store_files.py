"""Models kept in the database as the file their family reads (`sqltok_store.model_files`)."""
import pickle

import pytest

from sqltok.errors import SqltokError
from sqltok.store import ModelFile, drop_model, ensure_schema, load_model, load_model_file, save_model_file
from sqltok.store import transaction
from sqltok.tokenizer import Tokenizer

from conftest import SHARED_TOKENIZERS

BERT = SHARED_TOKENIZERS / "bert-base-uncased" / "tokenizer.json"


def _keep(con, name: str) -> None:
    ensure_schema(con)
    with transaction(con):
        save_model_file(con, name, ModelFile("wordpiece", "hf-wordpiece", BERT.read_bytes()), 30522,
                        {"lowercase": True}, {"source": str(BERT)})


def test_a_kept_file_encodes_in_sql_as_the_file_does(con):
    _keep(con, "bert")
    text = "Héllo, WORLD! Tokenizers in SQL."
    assert con.execute("SELECT encode('bert', ?)", [text]).fetchall()[0][0] == Tokenizer.load(BERT).encode(text)
    assert load_model_file(con, "bert").kind == "hf-wordpiece"
    kept = Tokenizer.from_stored("hf-wordpiece", BERT.read_bytes(), "bert")
    assert pickle.loads(pickle.dumps(kept)).encode(text) == kept.encode(text)
    assert con.execute("SELECT method FROM sqltok_store.models WHERE model = 'bert'").fetchall() == [("wordpiece",)]


def test_a_kept_file_is_no_bpe_model_and_drops_whole(con):
    _keep(con, "bert")
    with pytest.raises(SqltokError, match="is a wordpiece model"):
        load_model(con, "bert")
    drop_model(con, "bert")
    assert load_model_file(con, "bert") is None
    assert con.execute("SELECT count(*) FROM sqltok_store.model_files").fetchall() == [(0,)]


def test_a_kind_no_family_reads_is_named():
    with pytest.raises(SqltokError, match="kept as nonsense"):
        Tokenizer.from_stored("nonsense", b"", "m")
