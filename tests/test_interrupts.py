"""Ctrl-C in the Python API is a KeyboardInterrupt, however DuckDB reports it, and loses nothing."""
import os
import random
import signal
import threading
import time

import duckdb
import pyarrow as pa
import pytest

import sqltok
from conftest import tiktoken_pair
from sqltok.bpe import train
from sqltok.interrupts import interruptible, is_interrupt
from sqltok.unigram.spec import UnigramSpec
from sqltok.unigram.train import train_unigram

WORDS = ["alpha", "beta", "gamma", "delta", "über", "日本語", "code()", "12345"]
DOCS = [" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9)) for i in range(400)]

# How DuckDB 2.0 reported Ctrl-C in a training run, by where it landed (measured with a real SIGINT).
DUCKDB_FORMS = [
    duckdb.InvalidInputException("Invalid Input Error: Python exception occurred while executing the UDF: "
                                 "KeyboardInterrupt: "),
    RuntimeError("Query interrupted"),
    duckdb.InterruptException("INTERRUPT Error: Interrupted!"),
]


@pytest.fixture()
def docs(con):
    con.execute("CREATE TABLE docs AS SELECT unnest($1::VARCHAR[]) AS text", [DOCS])
    return "SELECT text FROM docs"


def _store(con) -> list:
    return con.execute("SELECT model FROM sqltok_store.models ORDER BY ALL").fetchall()


@pytest.mark.parametrize("form", DUCKDB_FORMS, ids=["in-udf", "query-interrupted", "interrupt-exception"])
def test_each_form_is_a_keyboard_interrupt(con, docs, monkeypatch, form):
    sqltok.train_bpe(con, docs, 260, "kept")
    before = _store(con)

    def interrupted(*args, **kwargs):
        raise form

    monkeypatch.setattr(train, "count_corpus", interrupted)
    with pytest.raises(KeyboardInterrupt) as info:
        sqltok.train_bpe(con, docs, 270, "other")
    assert info.value.__cause__ is form
    assert _store(con) == before


def test_other_errors_pass_unchanged():
    error = duckdb.InvalidInputException("Invalid Input Error: Python exception occurred while executing "
                                         "the UDF: ValueError: bad")

    @interruptible
    def fails():
        raise error

    with pytest.raises(duckdb.InvalidInputException) as info:
        fails()
    assert info.value is error and not is_interrupt(error) and not is_interrupt(RuntimeError("boom"))


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
@pytest.mark.parametrize("run", [
    lambda con, q: sqltok.train_bpe(con, q, 300, "m"),
    lambda con, q: sqltok.train_superword(con, q, 300, "m", method="boundless"),
    lambda con, q: sqltok.train_wordpiece(con, q, 300, "m"),
    lambda con, q: train_unigram(con, q, "m", UnigramSpec(vocab_size=100)),
], ids=["bpe", "boundless", "wordpiece", "unigram"])
def test_a_real_ctrl_c_while_duckdb_reads_the_corpus(con, docs, run):
    """SIGINT sent by a UDF of the corpus query, so that it lands while DuckDB runs the query."""
    sent = []

    def ctrl_c(text: str) -> str:
        if not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the signal is handled meanwhile, here or in DuckDB's wait
        return text

    con.create_function("ctrl_c", ctrl_c, [duckdb.sqltype("VARCHAR")], duckdb.sqltype("VARCHAR"))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(con, "SELECT ctrl_c(text) AS text FROM docs")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent and _store(con) == []


def _tiktoken_ids(path):
    tok, ref = tiktoken_pair(path)
    return tok, ref.encode_ordinary_batch


def _hf_ids(path):
    import tokenizers
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_truncation()
    ref.no_padding()
    return sqltok.Tokenizer.load(path), lambda texts: [e.ids for e in ref.encode_batch(texts)]


def _sentencepiece_ids(path):
    import sentencepiece
    return sqltok.Tokenizer.load(path), sentencepiece.SentencePieceProcessor(model_file=str(path)).encode


def _ctrl_c_during(call) -> None:
    """Run `call()` with Ctrl-C (SIGINT) sent 20 ms after it starts: it must raise KeyboardInterrupt
    from inside the call (a handler that runs only once the call returned is too late)."""
    started = threading.Event()

    def ctrl_c():
        started.wait()
        time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=ctrl_c)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sender.start()
        with pytest.raises(KeyboardInterrupt) as info:
            started.set()
            call()
    finally:
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert any(str(entry.path).endswith(".pyx") for entry in info.traceback)  # raised in the call


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
@pytest.mark.parametrize("name, pair, copies", [("o200k_base.tiktoken", _tiktoken_ids, 1),
                                                ("bert-base-uncased_tokenizer.json", _hf_ids, 8),
                                                ("botchan_en_unigram_1000.model", _sentencepiece_ids, 1)],
                         ids=["bpe", "wordpiece", "sentencepiece"])
@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_encode_arrow_on_threads(bundled, name, pair, copies, threads):
    """Ctrl-C while `encode_arrow` encodes, on two threads or one, raises KeyboardInterrupt from inside
    the call, before the rows left are encoded (it came only once every row was), and the tokenizer
    gives the oracle's ids afterwards. The signal is sent 20 ms into a call of about 0.15-0.6 s
    (longer on a slower machine; WordPiece, which merges nothing, gets its lines `copies` times over),
    each of its 32 (one thread: 16) chunks a chance to stop."""
    tok, oracle = pair(bundled(name))
    rng = random.Random(7)  # words the tokenizer has not met: each is merged
    lines = [" ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyzéü", k=rng.randint(3, 14)))
                      for _ in range(100)) for _ in range(4000)]
    texts = pa.array(lines * copies)
    _ctrl_c_during(lambda: tok.encode_arrow(texts, threads=threads))
    assert tok.encode_arrow(pa.array(lines[:64]), threads=2).to_pylist() == oracle(lines[:64])


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
@pytest.mark.parametrize("call", ["encode_ordinary", "token_count", "encode_arrow"])
def test_ctrl_c_stops_one_long_text(bundled, call):
    """Ctrl-C while one long text is encoded (one str, GIL released, or one row of an Arrow array)
    raises KeyboardInterrupt from inside the call, between two of its 1 MiB segments, and the
    tokenizer gives tiktoken's ids afterwards. The signal is sent 20 ms into a text of 24 MB (about
    0.2-0.4 s here)."""
    tok, ref = tiktoken_pair(bundled("o200k_base.tiktoken"))
    rng = random.Random(11)  # words the tokenizer has not met: each is merged
    text = " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyzéü", k=rng.randint(3, 14)))
                    for _ in range(200_000))
    big = text * (24_000_000 // len(text))
    rows = pa.array([big, "x"])  # (made before the signal's clock starts: building it takes 10-30 ms)
    _ctrl_c_during(lambda: tok.encode_arrow(rows, threads=2) if call == "encode_arrow" else getattr(tok, call)(big))
    assert tok.encode_ordinary(text[:5000]) == ref.encode_ordinary(text[:5000])
