"""Superword training and inference: BoundlessBPE and SuperBPE identical to the reference's goldens,
the candidates in SQL, BoundlessBPE = matching SuperBPE, reuse of a phase-1 run, failures."""
from __future__ import annotations

import gzip
import json

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from sqltok.pretokenizer import patterns
import sqltok.bpe.superword as superword
from sqltok.bpe.candidates import candidates_arrow, letter_mask
from sqltok.bpe.reference_file import dumps, read_reference

GOLDEN_SUPERWORD = [  # name, training file, vocab size, options
    ("boundless_en_simple_v2048", "en_train", 2048, {"simple": True}),
    ("boundless_en_v8192", "en_train", 8192, {}),
    ("boundless_multi_v4096", "multi_train", 4096, {}),
    ("boundless_en_greedy_v8192", "en_train", 8192, {"greedy_split": True}),
    ("super_en_v8192", "en_train", 8192, {"method": "superbpe", "supermerges": 759}),
]
GOLDEN_ENCODINGS = [
    ("boundless_en_simple_v2048", "en_valid"), ("boundless_en_v8192", "en_valid"),
    ("boundless_multi_v4096", "en_valid"), ("boundless_multi_v4096", "multi_valid"),
    ("boundless_en_greedy_v8192", "en_valid"), ("super_en_v8192", "en_valid"),
]


def _golden_text(golden_dir, name: str) -> str:
    return gzip.decompress((golden_dir / f"{name}.model.gz").read_bytes()).decode("utf-8")


def _golden_tokenizer(golden_dir, tmp_path, name: str) -> sqltok.Tokenizer:
    path = tmp_path / f"{name}.model"
    path.write_text(_golden_text(golden_dir, name), encoding="utf-8", newline="\n")
    return sqltok.Tokenizer.load(path)


def _source(train_dir, train: str) -> sqltok.Source:
    return sqltok.Source(path=str(train_dir / f"{train}.jsonl.zst"))


def _supermerge_tokens(model: sqltok.Model) -> list[tuple[bytes, bytes]]:
    return [(model.tokens[m.left], model.tokens[m.right]) for m in model.supermerges]


@pytest.mark.parametrize("name,train,vocab,options", GOLDEN_SUPERWORD)
def test_golden_models_byte_for_byte(con, golden_dir, train_dir, name, train, vocab, options):
    sqltok.train_superword(con, _source(train_dir, train), vocab, name, **options)
    assert dumps(sqltok.load_model(con, name)) == _golden_text(golden_dir, name)


@pytest.mark.parametrize("name,valid", GOLDEN_ENCODINGS)
def test_golden_encodings_and_round_trip(golden_dir, tmp_path, name, valid):
    tok = _golden_tokenizer(golden_dir, tmp_path, name)
    texts = [json.loads(line)["text"]
             for line in gzip.decompress((golden_dir / f"{valid}.jsonl.gz").read_bytes()).decode().splitlines()]
    expected = [[int(x) for x in line.split()] for line in
                gzip.decompress((golden_dir / f"{name}.{valid}.ids.gz").read_bytes()).decode().splitlines()]
    got = tok.encode_ordinary_batch(texts)
    assert got == expected
    assert [tok.decode(ids) for ids in got] == texts


def test_boundless_equals_matching_superbpe(con, train_dir):
    """Paper section 3.1: SuperBPE with r regular merges and s supermerges taken from BoundlessBPE
    gives the same model, here on a size no golden file covers."""
    src = _source(train_dir, "en_train")
    sqltok.train_superword(con, src, 3000, "bl", simple=True)
    rep = sqltok.train_superword(con, src, 3000, "sb", method="superbpe", supermerges="match", simple=True)
    bl, sb = sqltok.load_model(con, "bl"), sqltok.load_model(con, "sb")
    assert len(bl.supermerges) == rep.supermerges > 0
    assert _supermerge_tokens(bl) == _supermerge_tokens(sb)
    assert [bl.tokens[m.left] + bl.tokens[m.right] for m in bl.merges] == \
        [sb.tokens[m.left] + sb.tokens[m.right] for m in sb.merges]
    assert sorted(bl.tokens) == sorted(sb.tokens)
    text = "it is one of the best ways to be sure that the number of the people in the world"
    assert con.execute("SELECT tokens('bl', ?) = tokens('sb', ?)", [text, text]).fetchall()[0][0]


def test_phase1_reuse_reads_no_corpus(con, golden_dir, train_dir):
    sqltok.train_superword(con, _source(train_dir, "en_train"), 8192, "bl")
    rep = sqltok.train_superword(con, None, 8192, "super_en_v8192", method="superbpe", supermerges=759,
                                 phase1="bl")
    assert dumps(sqltok.load_model(con, "super_en_v8192")) == _golden_text(golden_dir, "super_en_v8192")
    assert rep.documents == 8270 and rep.seconds["pretokenize_and_count"] < 1.0
    matched = sqltok.train_superword(con, None, 8192, "sb", method="superbpe", supermerges="match", phase1="bl")
    assert matched.supermerges == 759
    with pytest.raises(sqltok.SqltokError, match="candidates for a phase-1 vocabulary of 8192"):
        sqltok.train_superword(con, None, 9000, "big", phase1="bl")
    sqltok.train_bpe(con, _source(train_dir, "en_train"), 1000, "word")
    with pytest.raises(sqltok.SqltokError, match="holds no supermerge candidates"):
        sqltok.train_superword(con, None, 1000, "x", phase1="word")


def test_sql_candidates_merges_and_inference(con):
    docs = ["the cat sat on the mat and the cat ran", "the cat sat on the mat", "of the people, by the people"] * 20
    con.execute("CREATE TABLE docs AS SELECT unnest(?) AS text", [docs])
    rep = sqltok.train_superword(con, "SELECT text FROM docs", 290, "bl")
    assert rep.supermerges > 0 and rep.documents == 60
    counts = dict((tuple(c), n) for c, n in
                  con.execute("SELECT candidate, n FROM sqltok_candidate_counts('bl')").fetchall())
    assert counts[("the", " cat", " sat", " on", " the", " mat", " and", " the", " cat", " ran")] == 20
    assert counts[(" by", " the", " people")] == 20  # "," is no letter: it ends a candidate
    assert all(len(c) >= 2 for c in counts)
    ratios = dict(con.execute("SELECT unit, type_token_ratio FROM sqltok_type_token_ratios('bl')").fetchall())
    assert ratios["candidates"] == pytest.approx(rep.candidate_type_token_ratio)
    supers = con.execute("SELECT left_token || right_token = token FROM sqltok_merges('bl') WHERE is_super").fetchall()
    assert len(supers) == rep.supermerges and all(ok for (ok,) in supers)
    assert con.execute("SELECT count(*) FROM sqltok_tokens('bl') WHERE is_super").fetchall()[0][0] == rep.supermerges
    got = con.execute("SELECT decode('bl', encode('bl', text)) = text, token_count('bl', text) < "
                      "len(pretokenize(text)) FROM docs LIMIT 3").fetchall()
    assert got == [(True, True)] * 3
    assert con.execute("SELECT tokens('bl', NULL), encode('bl', NULL)").fetchall()[0] == (None, None)
    tokens = con.execute("SELECT tokens('bl', 'the cat sat on the mat')").fetchall()[0][0]
    assert len(tokens) < 6 and "".join(tokens) == "the cat sat on the mat"


def test_candidates_of_a_document(con, train_dir):
    sqltok.train_bpe(con, _source(train_dir, "en_train"), 2048, "w", simple=True)
    tok = sqltok.BPETokenizer.from_db(con, "w")
    assert len(tok.encode_ordinary(" Tokenization")) > 1  # two tokens: not eligible, it ends a run
    texts = ["one of the, 12 of the Tokenization of the", None, "", "the"]
    got = [None if row is None else [[tok.decode([u]) for u in c] for c in row]
           for row in candidates_arrow(tok, pa.array(texts)).to_pylist()]
    assert got == [[["one", " of", " the"], [" of", " the"], [" of", " the"]], None, [], []]


def _naive_supermerges(model: sqltok.Model, tok_phase1: sqltok.Tokenizer, text: str) -> list[int]:
    """The reference's inference, plainly: phase-1 ids per pretoken, then over each run of single-token
    pretokens the lowest-index supermerge present, all its occurrences left to right, until none."""
    ids = {t: i for i, t in enumerate(model.tokens)}
    rank = {(m.left, m.right): r for r, m in enumerate(model.supermerges)}
    out, run = [], []

    def flush():
        seq = list(run)
        while True:
            found = [(rank[p], p) for p in zip(seq, seq[1:]) if p in rank]
            if not found:
                break
            _, (a, b) = min(found)
            new, i, merged = ids[model.tokens[a] + model.tokens[b]], 0, []
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == (a, b):
                    merged.append(new)
                    i += 2
                else:
                    merged.append(seq[i])
                    i += 1
            seq = merged
        out.extend(seq)
        run.clear()

    for piece in sqltok.pretokenize(text, model.script_aware):
        piece_ids = tok_phase1.encode_ordinary(piece)
        if len(piece_ids) == 1:
            run.append(piece_ids[0])
        else:
            flush()
            out.extend(piece_ids)
    flush()
    return out


@pytest.fixture(scope="module")
def boundless_model(golden_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("golden") / "boundless_en_v8192.model"
    path.write_text(_golden_text(golden_dir, "boundless_en_v8192"), encoding="utf-8", newline="\n")
    model = read_reference(path)
    phase1 = sqltok.Model(method="word", tokens=model.tokens, token_counts=model.token_counts,
                          is_super=model.is_super, merges=model.merges, settings=model.settings)
    return model, sqltok.BPETokenizer.from_model(model, "bl"), sqltok.BPETokenizer.from_model(phase1, "p1")


WORDS = ["the", " the", " of", " to", " be", " in", " one", " and", " a", " is", " it", " that", " was",
         ",", ".", " 12", "\n", "  ", " people", " world", "'s", "Hello", " Привет", " 東京"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=60))
def test_supermerge_inference_matches_plain_algorithm(boundless_model, words):
    model, tok, phase1 = boundless_model
    text = "".join(words)
    assert tok.encode_ordinary(text) == _naive_supermerges(model, phase1, text)


def test_long_runs_are_not_quadratic(boundless_model):
    model, tok, phase1 = boundless_model
    text = " of the" * 200_000 + " people" + " in the" * 20   # one run of 400k single-token pretokens
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    short = " of the" * 30 + " people" + " in the" * 20
    assert tok.encode_ordinary(short) == _naive_supermerges(model, phase1, short)


def test_corpus_without_candidates(con):
    """No run of two pretokens with letters: BoundlessBPE stops at once (Algorithm 1 needs a supermerge
    pair), SuperBPE is its phase-1 model; NULL and empty documents are skipped."""
    con.execute("CREATE TABLE d AS SELECT * FROM (VALUES ('123 456 789'), (NULL), (''), ('12 34')) t(text)")
    bl = sqltok.train_superword(con, "SELECT text FROM d", 260, "bl")
    sb = sqltok.train_superword(con, "SELECT text FROM d", 260, "sb", method="superbpe", supermerges=5)
    assert (bl.documents, bl.unique_candidates, bl.vocab_size, bl.supermerges) == (2, 0, 243, 0)
    assert (sb.vocab_size, sb.regular_merges, sb.supermerges) == (250, 7, 0)
    assert con.execute("SELECT tokens('sb', '123 456')").fetchall()[0][0] == ["123", " ", "456"]


def test_bad_arguments(con):
    con.execute("CREATE TABLE docs AS SELECT 'the cat sat on the mat' AS text")
    for kwargs, message in [
        ({"method": "superbpe"}, "needs supermerges"),
        ({"method": "superbpe", "supermerges": 0}, "needs supermerges"),
        ({"method": "superbpe", "supermerges": 200}, "fewer than the 243 byte tokens"),
        ({"supermerges": 5}, "finds the number of supermerges itself"),
        ({"method": "wordpiece"}, "method must be"),
    ]:
        with pytest.raises(sqltok.SqltokError, match=message):
            sqltok.train_superword(con, "SELECT text FROM docs", 300, "m", **kwargs)
    assert sqltok.model_names(con) == []


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("where", ["save_model_rows", "delete_rows", "save_candidates"])  # after / while phase 2 runs
def test_failed_run_leaves_the_database_as_it_was(con, monkeypatch, failure, where):
    con.execute("CREATE TABLE docs AS SELECT 'the cat sat on the mat' AS text FROM range(10)")
    sqltok.train_superword(con, "SELECT text FROM docs", 260, "kept")
    before = {t: con.execute(f"SELECT * FROM sqltok_store.{t} ORDER BY ALL").fetchall()
              for t in ("models", "tokens", "merges", "pretoken_counts", "candidate_counts")}
    real = getattr(superword, where)

    def run_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise failure("injected")

    monkeypatch.setattr(superword, where, run_then_fail)
    with pytest.raises(failure):
        sqltok.train_superword(con, "SELECT text FROM docs", 270, "kept", replace=True)
    after = {t: con.execute(f"SELECT * FROM sqltok_store.{t} ORDER BY ALL").fetchall() for t in before}
    assert after == before
    temp = con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    assert temp == []


def test_progress_bars(con, capsys):
    con.execute("CREATE TABLE docs AS SELECT 'the cat sat on the mat, of the people' AS text FROM range(10)")
    sqltok.train_superword(con, "SELECT text FROM docs", 280, "m", method="superbpe", supermerges="match",
                           progress=True)
    err = capsys.readouterr().err
    assert "phase 1" in err and "phase 2 (boundless)" in err and "phase 2 (superbpe)" in err


def test_cli_superword(tmp_path, train_dir):
    from sqltok.cli import main

    db = str(tmp_path / "t.duckdb")
    src = str(train_dir / "en_train.jsonl.zst")
    assert main(["train", src, "--method", "boundless", "--vocab-size", "2048", "--simple", "--model", "bl",
                 "--max-documents", "2000", "--memory-limit", "1GB", "--db", db]) == 0
    assert main(["train", "--method", "superbpe", "--supermerges", "match", "--vocab-size", "2048",
                 "--phase1", "bl", "--model", "sb", "--db", db]) == 0
    assert main(["train", src, "--vocab-size", "2048", "--greedy-split", "--model", "x", "--db", db]) == 2
    assert main(["train", src, "--method", "superbpe", "--supermerges", "many", "--vocab-size", "2048",
                 "--model", "x", "--db", db]) == 2
    with duckdb.connect(db) as c:
        sqltok.register(c)
        rows = c.execute("SELECT model, method FROM sqltok_models()").fetchall()
    assert rows == [("bl", "boundless"), ("sb", "superbpe")]


def test_letter_rule_is_unicode_letters():
    """Eligibility needs a \\p{L} letter anywhere in the token (" the", "'s", ".com"), not digits or
    punctuation alone (" 12", " ,", "\\n")."""
    model = sqltok.Model(method="word", tokens=[bytes([b]) for b in sqltok.bpe.model.BYTE_ALPHABET],
                         token_counts=[0] * 243, is_super=[False] * 243, merges=[],
                         settings={"main_regex": patterns.O200K, "script_specific_regex": None})
    mask = letter_mask(sqltok.BPETokenizer.from_model(model, "b"))
    letters = {chr(b) for b in range(128) if mask[b]}
    assert letters == {c for c in map(chr, range(128)) if regex.match(r"\p{L}", c)}


def _phase2(candidates, counts, tokens, supermerges, prune_below, batch=None):
    """SuperBPE's phase 2 on `candidates` read in batches of `batch` (None: one), or None when the
    cuts may not hold."""
    from sqltok.bpe._phase2 import Phase2Units

    lists, ns = pa.array(candidates, pa.large_list(pa.int32())), pa.array(counts, pa.int64())  # slices keep offsets
    step = batch or max(1, len(lists))

    def batches():
        return [(lists.slice(i, step), ns.slice(i, step)) for i in range(0, len(lists), step)]

    out = Phase2Units(pa.array(tokens, pa.large_binary()), batches, prune_below).train(
        np.array([], np.int32), np.array([], np.int64), 10_000, "superbpe", supermerges)
    return None if out is None else {k: v if isinstance(v, int) else v.to_pylist() for k, v in out.items()}


@pytest.mark.parametrize("options", [{}, {"method": "superbpe", "supermerges": "match"}])
def test_pruning_gives_the_same_model(con, train_dir, monkeypatch, options):
    """Cutting candidates where two units stand side by side at most c_min times changes nothing:
    BoundlessBPE and the matching SuperBPE with and without the cuts, on our own run."""
    import sqltok.bpe.phase2 as phase2

    rep = sqltok.train_superword(con, _source(train_dir, "en_train"), 4000, "pruned", **options)
    assert rep.supermerges > 0
    pruned = dumps(sqltok.load_model(con, "pruned"))
    thresholds = []
    real = phase2.Phase2Units

    def unpruned(tokens, batches, prune_below, n_candidates):
        thresholds.append(prune_below)
        return real(tokens, batches, -1)

    monkeypatch.setattr(phase2, "Phase2Units", unpruned)
    sqltok.train_superword(con, _source(train_dir, "en_train"), 4000, "full", **options)
    assert all(t > 0 for t in thresholds)  # the runs above were pruned
    assert dumps(sqltok.load_model(con, "full")) == pruned


@pytest.mark.parametrize("held_bytes", [0, 40_000, 1 << 30])
def test_pruning_reads_the_candidates_again_or_holds_them(con, train_dir, monkeypatch, held_bytes):
    """Pruning reads the candidates twice: the second time from DuckDB, or from the first read's
    batches when they took at most HELD_BYTES (none, some batches before the limit, all of them);
    the same model each way."""
    import sqltok.bpe.phase2 as phase2

    src = sqltok.Source(path=str(train_dir / "en_train.jsonl.zst"), max_documents=1500)
    sqltok.train_superword(con, src, 1200, "streamed")
    reads = []
    real = phase2.arrow_batches

    def counted_reads(*args):
        reads.append(args[1])
        return real(*args)

    monkeypatch.setattr(phase2, "BATCH_ROWS", 500)
    monkeypatch.setattr(phase2, "HELD_BYTES", held_bytes)
    monkeypatch.setattr(phase2, "arrow_batches", counted_reads)
    rep = sqltok.train_superword(con, src, 1200, "held")
    assert rep.unique_candidates > 5000  # batches of about 12 kB: 40 kB holds some, not all
    assert len(reads) == (1 if held_bytes > 40_000 else 2)
    assert dumps(sqltok.load_model(con, "held")) == dumps(sqltok.load_model(con, "streamed"))


def test_pruning_starts_over_when_bytes_come_from_two_unit_sequences():
    """"ab"+"c" and "a"+"bc" both make "abc": the pair ("abc", "x") then has the counts of two rare
    boundaries together, so the cuts would be wrong; phase 2 notices and runs without them."""
    a, b, c, x, ab, bc = range(6)
    tokens = [b"a", b"b", b"c", b"x", b"ab", b"bc"]
    candidates = [[ab, c], [a, bc], [ab, c, x], [a, bc, x]]
    counts = [20, 20, 8, 8]
    full = _phase2(candidates, counts, tokens, 3, -1)
    assert full["count"] == [28, 28, 16]  # (ab, c), (a, bc), (abc, x)
    assert _phase2(candidates, counts, tokens, 3, 10) is None  # so the caller loads them again, uncut


_CANDIDATES = st.lists(st.tuples(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.integers(1, 40)),
                       min_size=1, max_size=30)


@given(_CANDIDATES, st.integers(1, 7), st.sampled_from([-1, 0, 5, 30]))
@settings(max_examples=80, deadline=None)
def test_phase2_reads_candidates_in_batches_as_one(rows, batch, prune):
    """Phase 2 learns the same from the candidates in batches of any size as from one table, cut
    or not (the rare boundaries are counted over all batches before any is cut)."""
    tokens = [b"a", b"b", b"c", b"d", b"e", b"f"]
    candidates, counts = [r[0] for r in rows], [r[1] for r in rows]
    assert _phase2(candidates, counts, tokens, 6, prune, batch) == _phase2(candidates, counts, tokens, 6, prune)


def test_run_phase2_loads_again_uncut_when_the_cuts_may_not_hold(con):
    """The case above through DuckDB: the pruned run gives up, `run_phase2` reads the work table
    again without cuts, and the supermerges are those of the uncut run."""
    from sqltok.bpe.phase1 import Phase1
    from sqltok.bpe.phase2 import run_phase2
    from sqltok.training.counting import counted

    a, b, c, x, ab, bc = range(6)
    tokens = [b"a", b"b", b"c", b"x", b"ab", b"bc"]
    con.execute("CREATE TEMP TABLE cands AS SELECT * FROM (VALUES ([4, 2], 20), ([0, 5], 20), ([4, 2, 3], 8), "
                "([0, 5, 3], 8)) t(candidate, n)")
    no_merges = pa.table({"left": pa.array([], pa.int32()), "right": pa.array([], pa.int32()),
                          "count": pa.array([], pa.int64()), "flag": pa.array([], pa.int8()),
                          "new_id": pa.array([], pa.int32())})
    p1 = Phase1(pa.array(tokens, pa.large_binary()), pa.array([0] * 6, pa.int64()), no_merges, False, ())
    units = counted(con, "cands", "candidate")
    out = run_phase2(con, units, p1, 10_000, "superbpe", 3, 10, False)
    assert list(zip(out.left.to_pylist(), out.right.to_pylist(), out.count.to_pylist())) == \
        [(a, bc, 28), (ab, c, 28), (6, x, 16)]
    assert out == run_phase2(con, units, p1, 10_000, "superbpe", 3, None, False)


def test_candidates_need_a_phase1_model(con):
    """A two-phase model's supermerges join pretokens, so it cannot tell candidates: a clear error."""
    con.execute("CREATE TABLE few AS SELECT unnest(['it is one of the best ways', 'one of the best']) AS text")
    sqltok.train_superword(con, "SELECT text FROM few", 280, "two", method="boundless")
    with pytest.raises(sqltok.SqltokError, match="found with a phase-1"):
        candidates_arrow(sqltok.BPETokenizer.from_db(con, "two"), pa.array(["one of the best"]))


def test_cli_says_why_boundless_stops_short(tmp_path, capsys):
    """BoundlessBPE ends at its last supermerge pair with regular pairs left (BPE makes 13 merges of
    this corpus): the note said "no pair is left to merge"."""
    from sqltok.cli import main

    db, sql = str(tmp_path / "t.duckdb"), "SELECT 'the cat' AS text FROM range(5) UNION ALL SELECT '12345678 90123456' FROM range(3)"
    assert main(["train", "--sql", sql, "--method", "boundless", "--vocab-size", "300", "--model", "b", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "7 regular merges, 1 supermerges" in out and "no pair is left to merge" not in out
    assert "(no supermerge pair is left, where BoundlessBPE stops as the reference does)" in out
    assert main(["train", "--sql", sql, "--vocab-size", "300", "--model", "p", "--db", db]) == 0
    assert "13 merges" in (out := capsys.readouterr().out) and "(no pair is left to merge)" in out
