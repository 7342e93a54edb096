"""`sqltok_evaluate` / `sqltok.judge.metrics.evaluate` against direct computations: the Shannon and
Rényi efficiencies against the `tokenization-scorer` package, every other metric in plain Python over
the ids the tokenizer's own Python API gives."""
from __future__ import annotations

import bisect
import functools
import gzip
import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pytest
import tokenization_scorer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle_pretokenize as oracle
import sqltok
from sqltok.cli import main
from sqltok.errors import SqltokError
from sqltok.judge.formatting import format_table
from sqltok.judge.metrics import CONTRACT_KEYS, NO_TOKENS, evaluate, records
from sqltok.named_tokenizers import named_tokenizers

SAMPLE = Path(__file__).parent / "data" / "corpora_sample.jsonl"
GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture(scope="module")
def judged(bundled, tmp_path_factory):
    """A connection that knows six kinds of tokenizer: o200k (.tiktoken), BERT (WordPiece
    tokenizer.json), Mistral's SentencePiece BPE and a SentencePiece Unigram .model, a reference
    BoundlessBPE .model and a BPE model trained into the store."""
    con = duckdb.connect()
    sqltok.register(con)
    model = tmp_path_factory.mktemp("models") / "bl.model"
    model.write_bytes(gzip.decompress((GOLDEN / "boundless_en_v8192.model.gz").read_bytes()))
    con.execute("SELECT sqltok_load('o200k', ?), sqltok_load('bert', ?), sqltok_load('bl', ?)",
                [str(bundled("o200k_base.tiktoken")), str(bundled("bert-base-uncased_tokenizer.json")),
                 str(model)]).fetchall()
    con.execute("SELECT sqltok_load('mistral', ?), sqltok_load('unigram', ?)",
                [str(bundled("mistral_tokenizer.model.v1")), str(bundled("kyoto_ja_unigram_8000.model"))]).fetchall()
    sqltok.train_bpe(con, sqltok.Source(path=str(GOLDEN / "en_valid.jsonl.gz")), 600, "small")
    con.execute(f"CREATE TABLE valid AS SELECT text, lang FROM read_json('{SAMPLE}')")
    yield con
    con.close()


def _scorer(seqs: list[list[int]], metric: str, **kw) -> float:
    lines = [" ".join(map(str, s)) for s in seqs if s]
    return tokenization_scorer.score(lines, metric=metric, **kw)


@functools.cache
def _vocab_size(tok) -> int:
    """Ids that have a token (o200k has a gap below its special tokens)."""
    if isinstance(tok, sqltok.WordPieceTokenizer):
        return tok.n_vocab
    has = 0
    for i in range(tok.n_vocab):
        try:
            tok.decode_single_token_bytes(i)
            has += 1
        except ValueError:
            pass
    return has


def _split_in_context(tok, text: str, ids: list[int]) -> int:
    """How many words of `text` two or more of its tokens overlap (by byte offsets)."""
    ends = list(itertools.accumulate(len(tok.decode_single_token_bytes(i)) for i in ids))
    starts = [0] + ends[:-1]
    split = 0
    for m in re.finditer(r"\S+", text):  # \s of a str pattern: what str.split() splits on
        a = len(text[:m.start()].encode())
        b = a + len(m.group().encode())
        split += bisect.bisect_left(starts, b) - bisect.bisect_right(ends, a) >= 2
    return split


def _direct(con, tok_name: str, texts: list[str], alpha: float = 2.5) -> dict:
    """Every metric of one group computed directly from the tokenizer's Python API."""
    tok = named_tokenizers(con).get(tok_name)
    seqs = [tok.encode_ordinary(t) for t in texts]
    lengths = [len(s) for s in seqs]
    tokens = sum(lengths)
    counts = Counter(i for s in seqs for i in s)
    vocab = _vocab_size(tok)
    words = [w for t in texts for w in t.split()]
    if isinstance(tok, (sqltok.WordPieceTokenizer, sqltok.SentencePieceTokenizer)):
        extra = len(tok.encode_ordinary(""))  # each word alone, [CLS] and [SEP] not counted
        split = sum(len(tok.encode_ordinary(w)) - extra >= 2 for w in words)
    else:
        split = sum(_split_in_context(tok, t, s) for t, s in zip(texts, seqs))
    p = np.array(list(counts.values()), dtype=float) / tokens
    nbytes = sum(len(t.encode()) for t in texts)
    return {
        "documents": len(texts), "bytes": nbytes, "characters": sum(len(t) for t in texts),
        "words": len(words), "pretokens": sum(len(oracle.MAIN.findall(t)) for t in texts), "tokens": tokens,
        "bytes_per_token": nbytes / tokens, "characters_per_token": sum(len(t) for t in texts) / tokens,
        "fertility": tokens / len(words) if words else None, "split_word_share": split / len(words) if words else None,
        "tokens_per_document_mean": tokens / len(texts),
        "tokens_per_document_p50": np.percentile(lengths, 50), "tokens_per_document_p95": np.percentile(lengths, 95),
        "tokens_per_document_p99": np.percentile(lengths, 99), "tokens_per_document_max": max(lengths),
        "vocab_size": vocab, "distinct_tokens": len(counts), "vocab_utilization": len(counts) / vocab,
        "shannon_entropy": float(-(p * np.log2(p)).sum()),
        "renyi_entropy": float(-(p * np.log2(p)).sum() if alpha == 1 else np.log2((p ** alpha).sum()) / (1 - alpha)),
        "type_token_ratio": len(counts) / tokens, "tokens_per_byte": tokens / nbytes, "seqs": seqs,
    }


def _check(row: dict, want: dict) -> None:
    for key, value in want.items():
        if key in ("seqs", "tokens_per_byte"):
            continue
        assert row[key] == (None if value is None else pytest.approx(value, rel=1e-12, abs=1e-12)), key


@pytest.mark.parametrize("tok_name", ["o200k", "bert", "mistral", "unigram", "bl", "small"])
def test_metrics_equal_direct_computation_and_the_scorer(judged, tok_name):
    con = judged
    by_lang: dict[str, list[str]] = {}
    for text, lang in con.execute("SELECT text, lang FROM valid").fetchall():
        by_lang.setdefault(lang, []).append(text)
    rows = records(evaluate(con, [tok_name], sqltok.Source(table="valid"), by="lang", reference="en"))
    assert [r["group"] for r in rows][0] is None and {r["group"] for r in rows[1:]} == set(by_lang)
    wanted = {lang: _direct(con, tok_name, texts) for lang, texts in by_lang.items()}
    wanted[None] = _direct(con, tok_name, [t for texts in by_lang.values() for t in texts])
    for row in rows:
        want = wanted[row["group"]]
        _check(row, want)
        assert row["renyi_alpha"] == 2.5
        # the scorer's own default divides by the number of tokens seen; sqltok by the vocabulary's size
        vocab = want["vocab_size"]
        assert abs(row["renyi_efficiency"] - _scorer(want["seqs"], "renyi_efficiency", power=2.5, vocab=vocab)) < 1e-9
        assert abs(row["shannon_efficiency"] - _scorer(want["seqs"], "shannon_efficiency", vocab=vocab)) < 1e-9
        assert abs(row["shannon_entropy"] - _scorer(want["seqs"], "shannon_entropy")) < 1e-9
        assert abs(row["renyi_entropy"] - _scorer(want["seqs"], "renyi_entropy", power=2.5)) < 1e-9
        seen = row["distinct_tokens"]
        assert abs(row["renyi_entropy"] / math.log2(seen) - _scorer(want["seqs"], "renyi_efficiency", power=2.5)) < 1e-9
        premium = want["tokens_per_byte"] / wanted["en"]["tokens_per_byte"]
        assert row["premium"] == pytest.approx(premium, rel=1e-12)


SPACES = "\t\n\x0b\x0c\r\x1c\x1f \x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u200b"
texts = st.text(st.one_of(st.characters(codec="utf-8", exclude_categories=["Cs"]), st.sampled_from(SPACES),
                          st.sampled_from("ab .é日")), min_size=1, max_size=40)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.tuples(texts, st.sampled_from(["a", "b", "c"])), min_size=1, max_size=12),
       alpha=st.sampled_from([0.5, 1.0, 2.5, 3.0]))
def test_metrics_of_generated_documents(judged, docs, alpha):
    con = judged
    con.execute("CREATE OR REPLACE TEMP TABLE gen (text VARCHAR, grp VARCHAR)")
    con.executemany("INSERT INTO gen VALUES (?, ?)", [list(d) for d in docs])
    rows = records(evaluate(con, ["o200k"], sqltok.Source(table="gen"), by="grp", alpha=alpha))
    groups = {g: [t for t, gg in docs if gg == g] for _, g in docs}
    assert len(rows) == len(groups) + 1
    for row in rows:
        group = [t for t, _ in docs] if row["group"] is None else groups[row["group"]]
        want = _direct(con, "o200k", group, alpha)
        _check(row, want)
        # at alpha = 1 the scorer's renyi_efficiency hands an exhausted iterator to its Shannon one
        metric = "shannon_efficiency" if alpha == 1 else "renyi_efficiency"
        assert abs(row["renyi_efficiency"] - _scorer(want["seqs"], metric, power=alpha, vocab=want["vocab_size"])) < 1e-9


def _scripts_of(text: str) -> str:
    table = oracle.script_table()
    counts = Counter(s for s in (table[ord(c)] for c in text) if s not in ("Common", "Inherited", "Unknown"))
    if not counts:
        return "Common"
    best, running = max(counts.values()), Counter()
    for s in (table[ord(c)] for c in text):  # ties: the script that reached the top count first
        running[s] += 1
        if running[s] == best and counts[s] == best:
            return s


@settings(max_examples=200, deadline=None)
@given(st.one_of(texts, st.text(st.sampled_from("aé1 .日本語ひらがなカタカナ한국어ไทยрусскийΕλλη\u0301"), max_size=30)))
def test_dominant_script_equals_scripts_txt(text):
    from sqltok.pretokenizer._scripts import dominant_script_arrow
    import pyarrow as pa

    assert dominant_script_arrow(pa.array([text, None], pa.large_string())).to_pylist() == [_scripts_of(text), None]


def test_dominant_script_fixed_cases():
    from sqltok.pretokenizer._scripts import dominant_script_arrow
    import pyarrow as pa

    cases = {"a\u0301\u0301": "Latin", "\u0301\u0301": "Common", "12 ,.": "Common", "": "Common",
             "日本語の本": "Han", "日本語のテキスト": "Katakana", "ひらがなと漢字": "Hiragana", "Ωmega": "Latin", "ΩΩ ab": "Greek"}
    assert dominant_script_arrow(pa.array(list(cases), pa.large_string())).to_pylist() == list(cases.values())


def test_groups_default_to_the_dominant_script(judged):
    rows = records(evaluate(judged, ["o200k"], sqltok.Source(table="valid")))
    groups = {r["group"]: r["documents"] for r in rows[1:]}
    want = Counter(_scripts_of(t) for (t,) in judged.execute("SELECT text FROM valid").fetchall())
    assert groups == dict(want)


def test_bad_input_gets_clear_errors(judged):
    con = judged
    con.execute("CREATE OR REPLACE TEMP TABLE nothing AS SELECT NULL::VARCHAR AS text, 'x' AS lang")
    with pytest.raises(SqltokError, match="no documents"):
        evaluate(con, ["o200k"], sqltok.Source(table="nothing"))
    with pytest.raises(SqltokError, match="no tokenizer named 'nope'.*loaded: .*o200k.*models in the database: small"):
        evaluate(con, ["nope"], sqltok.Source(table="valid"))
    with pytest.raises(SqltokError, match="no column 'language' to group by; its columns: text, lang"):
        evaluate(con, ["o200k"], sqltok.Source(table="valid"), by="language")
    with pytest.raises(SqltokError, match="no group 'xx' to compare with"):
        evaluate(con, ["o200k"], sqltok.Source(table="valid"), by="lang", reference="xx")
    with pytest.raises(SqltokError, match="alpha must be positive"):
        evaluate(con, ["o200k"], sqltok.Source(table="valid"), alpha=0)
    with pytest.raises(SqltokError, match="at least one tokenizer"):
        evaluate(con, [], sqltok.Source(table="valid"))


def test_a_group_without_tokens_is_nan_with_a_note(judged):
    con = judged
    con.execute("CREATE OR REPLACE TEMP TABLE holes AS SELECT * FROM (VALUES ('', 'empty'), ('hello world', 'full')) t(text, g)")
    rows = {r["group"]: r for r in records(evaluate(con, ["o200k"], sqltok.Source(table="holes"), by="g"))}
    empty = rows["empty"]
    assert empty["tokens"] == 0 and empty["documents"] == 1 and empty["note"] == NO_TOKENS
    assert empty["bytes_per_token"] is None and empty["shannon_efficiency"] is None
    assert "note" not in rows["full"] and rows["full"]["tokens"] == 2


def test_the_note_of_an_empty_corpus_names_the_all_groups_row(judged):
    con = judged
    con.execute("CREATE OR REPLACE TEMP TABLE blank AS SELECT '' AS text")
    table = format_table(records(evaluate(con, ["o200k"], sqltok.Source(table="blank"))))
    assert f"o200k / (all): {NO_TOKENS}" in table.splitlines() and "None" not in table


def test_cli_json_contract(judged, bundled, capsys, tmp_path):
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        sqltok.register(con)
        sqltok.train_bpe(con, sqltok.Source(path=str(GOLDEN / "en_valid.jsonl.gz")), 400, "mine")
    assert main(["evaluate", "mine", str(bundled("r50k_base.tiktoken")), "--on", str(SAMPLE), "--by", "lang",
                 "--json", "--db", str(db)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2 * 14 and {x["tokenizer"] for x in lines} == {"mine", "r50k_base"}
    for line in lines:
        assert set(CONTRACT_KEYS) <= set(line)
    assert main(["evaluate", "mine", "--on", str(SAMPLE), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("mine") and "(all)" in out and "bytes/tok" in out
    assert main(["evaluate", "gone", "--on", str(SAMPLE), "--db", str(db)]) == 2
    assert "no tokenizer named 'gone'" in capsys.readouterr().err


def test_renyi_entropy_of_a_high_order_where_n_to_the_alpha_overflows(judged):
    """sum(n^alpha) overflowed a double (70^200) and the entropy was -inf; infinite alpha was DuckDB's
    binder error."""
    con = judged
    con.execute("CREATE OR REPLACE TABLE many AS SELECT repeat('the cat sat on the mat ', 70) AS text")
    row = records(evaluate(con, ["o200k"], sqltok.Source(table="many"), alpha=200.0))[0]
    want = _direct(con, "o200k", [con.execute("SELECT text FROM many").fetchone()[0]], alpha=200.0)
    assert math.isfinite(row["renyi_entropy"]) and row["renyi_entropy"] == pytest.approx(want["renyi_entropy"], rel=1e-9)
    with pytest.raises(SqltokError, match="positive and finite, not inf"):
        evaluate(con, ["o200k"], sqltok.Source(table="many"), alpha=math.inf)
