"""Counting and encoding on a Dask cluster: every golden model of the reference trained through a
2-worker LocalCluster is the same byte for byte; shards read every document once; outputs are reused
while their shard is unchanged; a killed worker costs a retry; a bad shard fails the run by name."""
from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from unittest import mock

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sqltok
from conftest import arrow_pools_seen, sqltok_home
from sqltok.bpe.reference_file import dumps
from sqltok.cli import main
from sqltok.cluster import Cluster, core_share, local_cluster, map_counts
from sqltok.cluster.encoding import encode_shards, output_names
from sqltok.cluster.shard_source import rows_query, shard_source
from sqltok.cluster.worker_state import worker_connection
from sqltok.cluster.shards import shards_of
from sqltok.encode_files import id_list_type
from sqltok.errors import CorpusError, ShardError, SqltokError
from sqltok.progress import ShardProgress

GOLDEN = Path(__file__).parent / "data" / "golden"
TRAIN = Path(__file__).parent / "data" / "train"
MANIFEST = json.loads((GOLDEN / "MANIFEST.json").read_text())
SHARD_BYTES = 2_000_000  # the 12-17 MB training files become 7-9 shards


def _golden(name: str) -> str:
    return gzip.decompress((GOLDEN / f"{name}.model.gz").read_bytes()).decode("utf-8")


def _assert_same_text(got: str, expected: str) -> None:
    """Equal model files; else the first line that differs (a diff of whole models takes minutes)."""
    same = got == expected
    first = next(((i, a, b) for i, (a, b) in enumerate(zip(got.splitlines(), expected.splitlines())) if a != b),
                 ("lengths", len(got), len(expected)))
    assert same, first


@pytest.fixture(scope="module")
def training_files(tmp_path_factory) -> dict[str, str]:
    """The reference's training files as the cluster shards them: English as plain JSONL (byte
    ranges), the multilingual one as Parquet of small row groups (runs of row groups)."""
    folder = tmp_path_factory.mktemp("train")
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT text FROM read_json('{TRAIN / 'en_train.jsonl.zst'}')) "
                    f"TO '{folder / 'en_train.jsonl'}' (FORMAT json)")
        con.execute(f"COPY (SELECT text FROM read_json('{TRAIN / 'multi_train.jsonl.zst'}')) "
                    f"TO '{folder / 'multi_train.parquet'}' (FORMAT parquet, ROW_GROUP_SIZE 2048)")
    return {"en_train.jsonl": str(folder / "en_train.jsonl"), "multi_train.jsonl": str(folder / "multi_train.parquet")}


@pytest.fixture(scope="module")
def client():
    with local_cluster(2) as c:
        yield c


@pytest.fixture(scope="module")
def golden_work(tmp_path_factory):
    """One work folder for the golden runs: each corpus's pretokens are counted once and reused."""
    return str(tmp_path_factory.mktemp("cluster-golden"))


def _train(con, spec: dict, files: dict[str, str], cluster) -> None:
    src = sqltok.Source(path=files[spec["train"]])
    simple = spec.get("simple", False)
    if spec["method"] == "bpe":
        sqltok.train_bpe(con, src, spec["vocab_size"], spec["name"], simple=simple, cluster=cluster)
    else:
        options = {"method": "superbpe", "supermerges": spec["supermerges"]} if spec["method"] == "super" else {}
        sqltok.train_superword(con, src, spec["vocab_size"], spec["name"], simple=simple,
                               greedy_split=spec.get("greedy", False), cluster=cluster, **options)


@pytest.mark.parametrize("spec", MANIFEST, ids=[m["name"] for m in MANIFEST])
def test_every_golden_through_two_workers(con, client, golden_work, training_files, spec):
    shards = shards_of(sqltok.Source(path=training_files[spec["train"]]), SHARD_BYTES)
    assert len(shards) > 3
    _train(con, spec, training_files, Cluster(client, golden_work, shard_bytes=SHARD_BYTES))
    _assert_same_text(dumps(sqltok.load_model(con, spec["name"])), _golden(spec["name"]))


def _lines(docs: list[str]) -> bytes:
    return "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.text(max_size=30), max_size=30), shard_bytes=st.integers(1, 200))
def test_byte_range_shards_hold_every_line_once(tmp_path_factory, docs, shard_bytes):
    path = tmp_path_factory.mktemp("ranges") / "docs.jsonl"
    path.write_bytes(_lines(docs))
    src = sqltok.Source(path=str(path))
    shards = shards_of(src, shard_bytes)
    got = []
    with duckdb.connect() as con:
        for shard in shards:
            with shard_source(shard, src, con) as part:
                got += Path(part.path).read_bytes().splitlines(keepends=True)
    assert got == _lines(docs).splitlines(keepends=True)


@settings(max_examples=40, deadline=None)
@given(groups=st.lists(st.integers(1, 9), min_size=1, max_size=8), shard_bytes=st.integers(1, 400))
def test_parquet_shards_hold_every_row_once_in_order(tmp_path_factory, groups, shard_bytes):
    path = tmp_path_factory.mktemp("groups") / "docs.parquet"
    rows = [f"doc {i}" for i in range(sum(groups))]
    _write_groups(path, rows, groups)
    got = []
    with duckdb.connect() as con:
        for shard in shards_of(sqltok.Source(path=str(path)), shard_bytes):
            if shard.kind == "file":
                got += con.execute(f"SELECT * FROM read_parquet('{path}')").fetchall()
            else:
                assert shard.kind == "rows" and shard.start < shard.stop
                got += con.execute(rows_query(shard)).fetchall()
    assert got == [(r, i) for i, r in enumerate(rows)]


@settings(max_examples=30, deadline=None)
@given(groups=st.lists(st.integers(1, 9), min_size=1, max_size=8), shard_bytes=st.integers(1, 400))
def test_a_file_with_a_file_row_number_column_reads_each_row_group_once(tmp_path_factory, groups, shard_bytes):
    """DuckDB's file_row_number option clashes with a column of that name: such a file is cut at row
    groups, and each shard reads its own groups (pyarrow), not the file from its start (LIMIT OFFSET,
    quadratic in the shards): every row once, in order, every row group read once."""
    path = tmp_path_factory.mktemp("numbered") / "docs.parquet"
    rows = [f"doc {i}" for i in range(sum(groups))]
    _write_groups(path, rows, groups, "File_Row_Number")
    src = sqltok.Source(path=str(path))
    shards = shards_of(src, shard_bytes)
    read, real = [], pq.ParquetFile.read_row_groups

    def counted(self, row_groups, *args, **kwargs):
        read.extend(row_groups)
        return real(self, row_groups, *args, **kwargs)

    got = []
    with mock.patch.object(pq.ParquetFile, "read_row_groups", counted), duckdb.connect() as con:
        for shard in shards:
            with shard_source(shard, src, con) as part:
                got += con.execute(part.rows_query()).fetchall()
    assert got == [(r, i) for i, r in enumerate(rows)]
    assert sorted(read) == ([] if shards[0].kind == "file" else list(range(len(groups))))


def test_a_big_row_group_is_cut_into_even_shards(tmp_path):
    """Few big row groups still make even tasks for the workers: each is cut into parts of equal
    rows, and small ones next to each other share a shard."""
    path = tmp_path / "docs.parquet"
    rows = [f"document number {i:04d} " * 8 for i in range(160)]
    _write_groups(path, rows, [64, 64, 16, 16])
    size = pq.ParquetFile(path).metadata.row_group(0).total_byte_size
    shards = shards_of(sqltok.Source(path=str(path)), size * 3 // 10)
    assert [(s.start, s.stop) for s in shards] == [(0, 16), (16, 32), (32, 48), (48, 64),
                                                   (64, 80), (80, 96), (96, 112), (112, 128), (128, 160)]
    assert {s.kind for s in shards} == {"rows"}
    assert [(s.kind, s.start, s.stop) for s in shards_of(sqltok.Source(path=str(path)), 10 * size)] == [("rows", 0, 160)]


def _write_groups(path, rows: list[str], groups: list[int], number: str = "k") -> None:
    """`rows` as Parquet (text, `number` = row number) in row groups of `groups` rows."""
    with pq.ParquetWriter(path, pa.schema([("text", pa.string()), (number, pa.int64())])) as w:
        start = 0
        for g in groups:
            w.write_table(pa.table({"text": rows[start:start + g], number: list(range(start, start + g))}))
            start += g


def test_a_task_uses_its_share_of_the_cores(client, monkeypatch):
    threads = client.run(lambda: worker_connection().execute("SELECT current_setting('threads')").fetchone()[0])
    assert set(threads.values()) == {core_share.local_share(2)}
    monkeypatch.delenv("SQLTOK_THREADS", raising=False)
    monkeypatch.setattr(core_share, "available_cpus", lambda: 8)
    monkeypatch.setattr(core_share, "get_worker", lambda: type("W", (), {"state": type("S", (), {"nthreads": 3})}))
    assert (core_share.task_threads(), core_share.local_share(3), core_share.local_share(16)) == (2, 2, 1)


def test_local_workers_keep_glibcs_trim_threshold(client):
    """Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 for their workers; sqltok's local cluster
    leaves glibc's own (a map task was a fifth slower under Dask's)."""
    assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}


def test_local_workers_run_quiet(client):
    """sqltok's local cluster slows what its processes do besides tasks (the workers' profilers,
    event-loop ticks, system and memory monitors), as they share the machine with the work."""
    from sqltok.cluster.session import LOCAL_QUIET

    def settings():
        import dask
        return {key: dask.config.get(key) for key in LOCAL_QUIET}

    assert list(client.run(settings).values()) == [LOCAL_QUIET] * 2


def test_a_map_task_allocates_arrow_with_malloc(con, tmp_path, monkeypatch):
    """A map task makes Arrow batches in a loop: with malloc's pool for the task (see `arrow_memory`),
    not the default one, and the default one again after it."""
    pool = pa.default_memory_pool().backend_name
    seen = arrow_pools_seen(monkeypatch, map_counts, "count_units")
    monkeypatch.setattr(map_counts, "worker_connection", lambda: con)  # the task runs here, not on a worker
    (tmp_path / "a.txt").write_text("\n".join(_docs(20)) + "\n", encoding="utf-8")
    src = sqltok.Source(path=str(tmp_path / "a.txt"), text_mode="line")
    done = map_counts.count_shard(shards_of(src)[0], src, map_counts.UnitsJob("pretokens", True),
                                  str(tmp_path / "work"), 4)
    assert seen == ["system"] and done.files
    assert pa.default_memory_pool().backend_name == pool


def _docs(n: int) -> list[str]:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "über", "日本語", "código"]
    return [" ".join(words[(i * k) % len(words)] for k in range(1, 3 + i % 9)) + f" #{i}" for i in range(n)]


def _pretoken_counts(con, model: str) -> list:
    return con.execute(f"SELECT pretoken, n FROM sqltok_pretoken_counts('{model}') ORDER BY ALL").fetchall()


def test_parquet_row_groups_jsonl_and_text_files_count_like_one_process(con, client, tmp_path):
    docs = _docs(400) + [""]
    pq.write_table(pa.table({"body": docs}), tmp_path / "a.parquet", row_group_size=37)
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"body": d}) + "\n" for d in docs), encoding="utf-8")
    (tmp_path / "c.txt").write_text("\n".join(docs[:50]) + "\n", encoding="utf-8")
    cluster = Cluster(client, str(tmp_path / "work"), shard_bytes=500)
    for name, src in {"parquet": sqltok.Source(path=str(tmp_path / "a.parquet"), text_key="body"),
                      "jsonl": sqltok.Source(path=str(tmp_path / "b.jsonl"), text_key="body"),
                      "lines": sqltok.Source(path=str(tmp_path / "c.txt"), text_mode="line")}.items():
        kinds = {s.kind for s in shards_of(src, 500)}
        assert kinds == {"parquet": {"rows"}, "jsonl": {"bytes"}, "lines": {"file"}}[name]
        one = sqltok.train_bpe(con, src, 300, f"{name}_one")
        many = sqltok.train_bpe(con, src, 300, f"{name}_many", cluster=cluster)
        assert _pretoken_counts(con, f"{name}_many") == _pretoken_counts(con, f"{name}_one")
        assert (many.documents, many.empty_documents, many.bytes) == (one.documents, one.empty_documents, one.bytes)
        _assert_same_text(dumps(sqltok.load_model(con, f"{name}_many")), dumps(sqltok.load_model(con, f"{name}_one")))


def _map_folders(work: Path) -> set[str]:
    return {p.name for p in (work / "map").iterdir() if not p.name.endswith(".partial")}


def test_a_rerun_reuses_the_shards_counted_and_recounts_a_changed_one(con, client, tmp_path):
    for i in range(3):
        (tmp_path / f"part{i}.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in _docs(50 + i)),
                                                 encoding="utf-8")
    src = sqltok.Source(path=str(tmp_path / "part*.jsonl"))
    work = tmp_path / "work"
    cluster = Cluster(client, str(work))
    sqltok.train_bpe(con, src, 300, "first", cluster=cluster)
    first = _map_folders(work)
    assert len(first) == 3
    sqltok.train_bpe(con, src, 300, "again", cluster=cluster)
    assert _map_folders(work) == first
    st_ = os.stat(tmp_path / "part1.jsonl")
    os.utime(tmp_path / "part1.jsonl", ns=(st_.st_atime_ns, st_.st_mtime_ns + 10**9))
    sqltok.train_bpe(con, src, 300, "touched", cluster=cluster)
    assert len(_map_folders(work) - first) == 1
    sqltok.train_bpe(con, src, 300, "simple", simple=True, cluster=cluster)  # other settings: counted anew
    assert len(_map_folders(work) - first) == 4
    _assert_same_text(dumps(sqltok.load_model(con, "touched")), dumps(sqltok.load_model(con, "first")))


def test_an_unreadable_shard_fails_the_run_with_its_name(con, client, tmp_path):
    (tmp_path / "good.jsonl").write_text(json.dumps({"text": "fine words"}) + "\n", encoding="utf-8")
    lines = [json.dumps({"text": d}) + "\n" for d in _docs(40)]
    lines[30] = '{"text": "broken\n'
    (tmp_path / "bad.jsonl").write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ShardError, match=r"bad\.jsonl \(bytes \d+-\d+\)"):
        sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "*.jsonl")), 300, "m",
                         cluster=Cluster(client, str(tmp_path / "work"), shard_bytes=500))
    (tmp_path / "bad.jsonl").unlink()
    (tmp_path / "worse.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(CorpusError, match="worse.parquet"):
        sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "worse.parquet")), 300, "m",
                         cluster=Cluster(client, str(tmp_path / "work")))
    assert "m" not in sqltok.model_names(con)


def test_sources_a_cluster_cannot_shard_are_refused(con, client, tmp_path):
    con.execute("CREATE TABLE t AS SELECT 'some text' AS text")
    for source in ("SELECT text FROM t", sqltok.Source(table="t")):
        with pytest.raises(CorpusError, match="path or glob.*cannot see this database.*PER_THREAD_OUTPUT"):
            sqltok.train_bpe(con, source, 300, "m", cluster=client)
    con.execute("COPY (SELECT text FROM t) TO '%s' (FORMAT parquet, PER_THREAD_OUTPUT)" % (tmp_path / "shards"))
    sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "shards" / "*.parquet")), 300, "from_files",
                     cluster=Cluster(client, str(tmp_path / "work")))
    (tmp_path / "a.jsonl").write_text(json.dumps({"text": "x y"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="first documents"):
        sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "a.jsonl"), max_documents=1), 300, "m",
                         cluster=client)


def _valid_ids(name: str) -> list[list[int]]:
    return [[int(x) for x in line.split()]
            for line in gzip.decompress((GOLDEN / f"{name}.en_valid.ids.gz").read_bytes()).decode().splitlines()]


def test_encoding_shards_gives_the_reference_ids_and_a_rerun_skips_them(con, client, tmp_path):
    texts = [json.loads(line)["text"]
             for line in gzip.decompress((GOLDEN / "en_valid.jsonl.gz").read_bytes()).decode("utf-8").splitlines()]
    pq.write_table(pa.table({"text": texts}), tmp_path / "valid.parquet", row_group_size=64)
    (tmp_path / "bpe.model").write_text(_golden("bpe_en_v8192"), encoding="utf-8", newline="\n")
    sqltok.import_model(con, str(tmp_path / "bpe.model"), "bpe")
    out = tmp_path / "ids"
    cluster = Cluster(client, str(tmp_path / "work"), shard_bytes=50_000)
    run = encode_shards(cluster, con, "bpe", sqltok.Source(path=str(tmp_path / "valid.parquet")),
                                                str(out))
    assert len(run.shards) > 2 and run.written == len(run.shards)
    files = [s.output for s in run.shards]
    table = pa.concat_tables(pq.read_table(f) for f in files)
    assert table.schema.field("ids").type == pa.list_(pa.uint16())
    assert table.column("ids").to_pylist() == _valid_ids("bpe_en_v8192")
    assert table.column("n_tokens").to_pylist() == [len(x) for x in _valid_ids("bpe_en_v8192")]
    summary = json.loads(Path(run.summary).read_text())
    assert (summary["rows"], summary["tokens"]) == (len(texts), sum(map(len, _valid_ids("bpe_en_v8192"))))
    stamps = [os.stat(f).st_mtime_ns for f in files]
    again = encode_shards(cluster, con, "bpe", sqltok.Source(path=str(tmp_path / "valid.parquet")),
                                                  str(out))
    assert again.written == 0 and [os.stat(f).st_mtime_ns for f in files] == stamps
    assert again.tokens == run.tokens
    assert not [p for p in out.iterdir() if p.name.endswith((".partial", ".sqltok-partial"))]


def test_runs_one_after_another_with_one_stored_model_each_ship_it(con, client, tmp_path):
    """Each run scatters the stored model to the workers: the same model again must not get the key of
    the one the run before released (Dask cancelled the tasks: 'lost dependencies')."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": d}) + "\n" for d in _docs(120)), encoding="utf-8")
    src = sqltok.Source(path=str(docs))
    sqltok.train_bpe(con, src, 300, "m")
    runs = [encode_shards(Cluster(client, str(tmp_path / "work"), shard_bytes=1500), con, "m", src,
                          str(tmp_path / f"ids{i}")) for i in range(4)]
    assert [r.written for r in runs] == [6] * 4 and len({r.tokens for r in runs}) == 1


def test_a_rerun_with_other_shards_removes_the_earlier_runs_outputs_and_nothing_else(con, client, tmp_path):
    """Another shard size (or a file that grew) gives other shards: the earlier run's files that the
    rerun does not write are removed, so that a glob of the folder reads each document once; a file
    sqltok did not write stays."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": d}) + "\n" for d in _docs(120)), encoding="utf-8")
    src = sqltok.Source(path=str(docs))
    sqltok.train_bpe(con, src, 300, "m")
    out = tmp_path / "ids"
    first = encode_shards(Cluster(client, str(tmp_path / "work"), shard_bytes=1500), con, "m", src, str(out))
    (out / "mine.parquet").write_bytes(b"not sqltok's")
    run = encode_shards(Cluster(client, str(tmp_path / "work"), shard_bytes=2500), con, "m", src, str(out))
    assert len(first.shards) != len(run.shards)
    names = {os.path.basename(s.output) for s in run.shards}
    assert {p.name for p in out.glob("*.parquet")} == names | {"mine.parquet"}
    assert (out / "mine.parquet").read_bytes() == b"not sqltok's"
    assert len(list((out / ".sqltok-shards").iterdir())) == len(run.shards)
    with duckdb.connect() as c:
        got = c.execute(f"SELECT ids FROM read_parquet('{out}/*.parquet', filename = true) "
                        "WHERE NOT ends_with(filename, 'mine.parquet') ORDER BY filename, file_row_number").fetchall()
    expected = con.execute(f"SELECT encode('m', text) FROM read_json('{docs}')").fetchall()
    assert sorted(r[0] for r in got) == sorted(list(r[0]) for r in expected)


def test_an_output_folder_the_input_would_read_is_refused(con, client, tmp_path):
    """Shard files written where the input's glob reads were encoded again by a rerun (a ShardError:
    no text column) and mixed with the texts for a reader of the folder."""
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"text": _docs(30)}), tmp_path / "in" / "a.parquet")
    sqltok.train_bpe(con, sqltok.Source(path=str(tmp_path / "in" / "a.parquet")), 300, "m")
    cluster = Cluster(client, str(tmp_path / "work"))
    for pattern, out in [("in/*.parquet", "in"), ("*/*.parquet", "ids")]:
        with pytest.raises(SqltokError, match="takes in the files written to"):
            encode_shards(cluster, con, "m", sqltok.Source(path=str(tmp_path / pattern)), str(tmp_path / out))
    assert sorted(p.name for p in tmp_path.rglob("*") if "work" not in p.parts) == ["a.parquet", "in"]
    encode_shards(cluster, con, "m", sqltok.Source(path=str(tmp_path / "in" / "*.parquet")), str(tmp_path / "ids"))


def test_two_inputs_that_would_share_an_output_name_are_refused(tmp_path):
    """Folders become '__' in the output names: x/a__b.jsonl and x__a/b.jsonl wrote one file, and a
    reader of the folder found one of them only."""
    for path in (tmp_path / "x" / "a__b.jsonl", tmp_path / "x__a" / "b.jsonl"):
        path.parent.mkdir()
        path.write_text(json.dumps({"text": "words"}) + "\n", encoding="utf-8")
    with pytest.raises(SqltokError, match=r"b\.jsonl and .*b\.jsonl would both be encoded to x__a__b\.jsonl\.parquet"):
        output_names(shards_of(sqltok.Source(path=str(tmp_path / "*" / "*.jsonl"))))
    assert output_names(shards_of(sqltok.Source(path=str(tmp_path / "x*" / "a*.jsonl")))) == ["a__b.jsonl.parquet"]


def test_id_list_type_follows_the_vocabulary():
    assert id_list_type(65536) == "USMALLINT[]"
    assert id_list_type(65537) == "UINTEGER[]"


def test_cli_train_on_a_cluster_and_encode_with_workers(client, tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": d}) + "\n" for d in _docs(200)), encoding="utf-8")
    db = str(tmp_path / "m.duckdb")
    work = str(tmp_path / "work")
    assert main(["train", str(docs), "--vocab-size", "300", "--model", "m", "--db", db,
                 "--cluster", client.scheduler.address, "--cluster-dir", work, "--no-progress"]) == 0
    assert main(["encode", "--model", "m", "--input", str(docs), "--output", str(tmp_path / "ids"), "--db", db,
                 "--workers", "1", "--cluster-dir", work, "--shard-mb", "0.004", "--no-progress"]) == 0
    out = capsys.readouterr().out
    n = len(shards_of(sqltok.Source(path=str(docs)), int(0.004 * 2**20)))
    assert n > 1 and "'m'" in out and f"wrote {n} shards ({n} now, 0 from an earlier run)" in out and "200 rows" in out
    with duckdb.connect(db, read_only=True) as con:
        sqltok.register(con)
        expected = con.execute(f"SELECT encode('m', text) FROM read_json('{docs}')").fetchall()
    shards = json.loads((tmp_path / "ids" / "_summary.json").read_text())["shards"]
    got = [ids for s in shards for ids in pq.read_table(s["output"]).column("ids").to_pylist()]
    assert got == [list(r[0]) for r in expected]
    with pytest.raises(SystemExit):  # one or the other
        main(["train", str(docs), "--vocab-size", "300", "--model", "x", "--workers", "1", "--cluster", "tcp://h:1"])
    # a method that counts in this process says so rather than ignoring the flag
    assert main(["train", str(docs), "--vocab-size", "300", "--model", "w", "--method", "wordpiece", "--db", db,
                 "--workers", "2"]) == 2
    assert "--method wordpiece counts in this process" in capsys.readouterr().err


def test_a_failed_encode_with_workers_leaves_the_output_folder_as_it_was(client, tmp_path, capsys):
    """A shard that cannot be read fails the run: the folder it made is removed; a folder that was
    there keeps its files and gets no partial ones (a finished shard may stay, for a rerun)."""
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in _docs(60)), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"text": "fine"}\n{"text": "broken\n', encoding="utf-8")
    db = str(tmp_path / "m.duckdb")
    assert main(["train", str(tmp_path / "a.jsonl"), "--vocab-size", "300", "--model", "m", "--db", db,
                 "--cluster", client.scheduler.address, "--cluster-dir", str(tmp_path / "work"), "--no-progress"]) == 0
    out = tmp_path / "ids"
    encode = ["encode", "--model", "m", "--input", str(tmp_path / "*.jsonl"), "--output", str(out), "--db", db,
              "--cluster-dir", str(tmp_path / "work"), "--no-progress"]
    assert main([*encode, "--workers", "1"]) == 2
    assert "b.jsonl" in capsys.readouterr().err and not out.exists()
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert main([*encode, "--workers", "1"]) == 2
    left = {p.name for p in out.iterdir()}
    assert "mine.txt" in left and left <= {"mine.txt", "a.jsonl.parquet", ".sqltok-shards"}
    assert not [p for p in out.rglob("*") if p.name.endswith("partial")]


def test_shard_progress_shows_shards_rate_and_eta():
    out = io.StringIO()
    bar = ShardProgress("counting", 4, 4_000_000, out)
    bar.start -= 1.0
    bar.advance(1_000_000)
    bar.close()
    assert "1/4 shards" in out.getvalue() and "MB/s" in out.getvalue() and "ETA" in out.getvalue()


def test_a_worker_killed_mid_task_costs_a_retry_not_the_run(con, client, training_files, tmp_path):
    """One worker blocks in its first map task and is killed there (SIGKILL); the scheduler runs the
    task again elsewhere and the model is the reference's."""
    spec = next(m for m in MANIFEST if m["name"] == "bpe_en_simple_v2048")
    sentinel = tmp_path / "stuck"
    client.wait_for_workers(2, timeout=60)  # (a worker an earlier test killed may still be restarting)
    victim = next(iter(client.scheduler_info()["workers"]))

    def stall_first_task(path=str(sentinel)):
        real = map_counts.count_units

        def stalled(*args, **kwargs):
            Path(path).write_text(str(os.getpid()))
            time.sleep(120)
            return real(*args, **kwargs)

        map_counts.count_units = stalled

    client.run(stall_first_task, workers=[victim])

    def kill_when_stuck():
        while not sentinel.exists():
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(int(sentinel.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill_when_stuck, daemon=True)
    killer.start()
    _train(con, spec, training_files, Cluster(client, str(tmp_path / "work"), shard_bytes=SHARD_BYTES))
    killer.join(timeout=5)
    assert sentinel.exists()
    _assert_same_text(dumps(sqltok.load_model(con, spec["name"])), _golden(spec["name"]))


@pytest.mark.parametrize("module", ["sqltok", "sqltok.cli", "sqltok.judge", "sqltok.cluster.commands"])
def test_importing_sqltok_leaves_dask_and_matplotlib_out(module):
    """Dask is imported when a run asks for a cluster and matplotlib when a report is drawn, never by
    `import sqltok` or the CLI: Dask's ~45,000 objects would make every full garbage collection of a
    process that only encodes cost 45-120 ms, and the two took seconds off every CLI command's start."""
    code = (f"import sys, {module}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'matplotlib')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=sqltok_home()).stdout
    assert out.strip() == "[]"


def test_cluster_names_load_on_first_use():
    import sqltok.cluster
    from sqltok.cluster.session import Cluster
    assert sqltok.cluster.Cluster is Cluster and sqltok.cluster.CLUSTER_NAME == "sqltok"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sqltok.cluster.nope


def test_a_rerun_encodes_again_when_the_models_special_tokens_changed(con, client, tmp_path):
    """The special tokens are part of what a stored model's shards are keyed by: with --allow-special
    they change the ids, so a model trained again with other special tokens is not served stale."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": f"hi <|x|> there {i} <|endoftext|>"}) + "\n" for i in range(30)),
                    encoding="utf-8")
    src = sqltok.Source(path=str(docs))
    cluster = Cluster(client, str(tmp_path / "work"))
    sqltok.train_bpe(con, src, 270, "m")
    encode_shards(cluster, con, "m", src, str(tmp_path / "ids"), allow_special=True)
    sqltok.train_bpe(con, src, 270, "m", special_tokens=("<|x|>",), replace=True)
    run = encode_shards(cluster, con, "m", src, str(tmp_path / "ids"), allow_special=True)
    assert run.written == 1
    expected = con.execute(f"SELECT encode_special('m', text) FROM read_json('{docs}')").fetchall()
    assert pq.read_table(run.shards[0].output).column("ids").to_pylist() == [list(r[0]) for r in expected]


def test_encoding_a_shard_that_holds_no_line_writes_an_empty_part(con, client, tmp_path):
    """A byte range inside a line longer than a shard, or an empty JSONL file of a glob (compressed
    too), holds no document: its part has no rows (DuckDB finds no text key in it to read)."""
    docs = _docs(30)
    docs[10] = "long " * 400
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text("", encoding="utf-8")
    src = sqltok.Source(path=str(tmp_path / "*.jsonl"))
    sqltok.train_bpe(con, src, 300, "m")
    run = encode_shards(Cluster(client, str(tmp_path / "work"), shard_bytes=500), con, "m", src, str(tmp_path / "ids"))
    assert any(s.rows == 0 for s in run.shards[:-1]) and run.shards[-1].rows == 0
    table = pa.concat_tables(pq.read_table(s.output) for s in run.shards)
    assert table.schema.field("ids").type == pa.list_(pa.uint16())
    expected = con.execute(f"SELECT encode('m', text) FROM read_json('{tmp_path / 'a.jsonl'}')").fetchall()
    assert table.column("ids").to_pylist() == [list(r[0]) for r in expected]
    assert run.rows == len(docs)
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress((tmp_path / "a.jsonl").read_bytes()))
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(b"\n"))
    gz = sqltok.Source(path=str(tmp_path / "*.jsonl.gz"))
    run = encode_shards(Cluster(client, str(tmp_path / "work")), con, "m", gz, str(tmp_path / "ids_gz"))
    assert [s.rows for s in run.shards] == [len(docs), 0]


def test_a_parquet_column_named_file_row_number_is_read_like_any_other(con, client, tmp_path):
    """DuckDB's file_row_number option clashes with a column of that name: such a file's shards are
    still its rows in order, counted and encoded as in one process."""
    docs = _docs(200)
    pq.write_table(pa.table({"File_Row_Number": list(range(200, 0, -1)), "text": docs}), tmp_path / "a.parquet",
                   row_group_size=20)
    src = sqltok.Source(path=str(tmp_path / "a.parquet"))
    cluster = Cluster(client, str(tmp_path / "work"), shard_bytes=500)
    assert {s.kind for s in shards_of(src, 500)} == {"rows"}
    sqltok.train_bpe(con, src, 300, "one")
    sqltok.train_bpe(con, src, 300, "many", cluster=cluster)
    _assert_same_text(dumps(sqltok.load_model(con, "many")), dumps(sqltok.load_model(con, "one")))
    run = encode_shards(cluster, con, "one", src, str(tmp_path / "ids"))
    got = [ids for s in run.shards for ids in pq.read_table(s.output).column("ids").to_pylist()]
    assert got == [list(r[0]) for r in con.execute("SELECT encode('one', unnest(?))", [docs]).fetchall()]


@pytest.mark.parametrize("mb", ["0", "-1", "nan", "inf"])
def test_shard_mb_must_be_a_positive_number(tmp_path, capsys, mb):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"text": "a few words"}) + "\n", encoding="utf-8")
    assert main(["train", str(docs), "--vocab-size", "300", "--model", "m", "--db", str(tmp_path / "m.duckdb"),
                 "--workers", "1", "--shard-mb", mb, "--cluster-dir", str(tmp_path / "work"), "--no-progress"]) == 2
    assert "--shard-mb takes a positive number" in capsys.readouterr().err
    assert not (tmp_path / "work").exists()


def test_encoding_shards_with_a_model_kept_as_a_file(con, client, tmp_path):
    """A stored WordPiece or Unigram model (kept as its file, not as merges) encodes on the workers
    to the ids SQL gives, as a byte-level BPE one does."""
    from sqltok.unigram.spec import UnigramSpec
    from sqltok.unigram.train import train_unigram

    docs = _docs(120)
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    src = sqltok.Source(path=str(tmp_path / "a.jsonl"))
    sqltok.train_wordpiece(con, src, 200, "wp")
    train_unigram(con, src, "uni", UnigramSpec(vocab_size=40))
    cluster = Cluster(client, str(tmp_path / "work"), shard_bytes=2000)
    for name in ("wp", "uni"):
        run = encode_shards(cluster, con, name, src, str(tmp_path / f"ids_{name}"))
        assert len(run.shards) > 1
        got = [ids for s in run.shards for ids in pq.read_table(s.output).column("ids").to_pylist()]
        assert got == [list(r[0]) for r in con.execute(f"SELECT encode('{name}', unnest(?))", [docs]).fetchall()]


def test_a_shard_rewritten_by_a_run_that_stopped_before_its_record_is_not_reused(con, client, tmp_path,
                                                                                  monkeypatch):
    """A run that replaced a shard's output and stopped before writing its record must not leave the
    earlier run's record vouching for the new file: a rerun of the earlier settings encodes again."""
    from sqltok.cluster import encoding

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": d}) + "\n" for d in _docs(40)), encoding="utf-8")
    src = sqltok.Source(path=str(docs))
    sqltok.train_bpe(con, src, 300, "a")
    sqltok.train_bpe(con, src, 260, "b")
    out = str(tmp_path / "ids")
    cluster = Cluster(client, str(tmp_path / "work"))
    first = encode_shards(cluster, con, "a", src, out)
    # a run with model b, in this process, stopped between its output and its record
    monkeypatch.setenv("SQLTOK_THREADS", "1")
    (shard,) = shards_of(src, cluster.shard_bytes)
    record = os.path.join(out, ".sqltok-shards", encoding.output_names([shard])[0] + ".json")
    real = encoding.publishing

    def stop_at_the_record(path):
        if path == record:
            raise KeyboardInterrupt
        return real(path)

    monkeypatch.setattr(encoding, "publishing", stop_at_the_record)
    with pytest.raises(KeyboardInterrupt):
        encoding.encode_shard((shard, first.shards[0].output, record, "other run"), src,
                              encoding.recipe(con, "b"), False)
    monkeypatch.setattr(encoding, "publishing", real)
    again = encode_shards(cluster, con, "a", src, out)
    assert again.written == 1
    assert pq.read_table(again.shards[0].output).column("ids").to_pylist() == \
        [list(r[0]) for r in con.execute(f"SELECT encode('a', text) FROM read_json('{docs}')").fetchall()]


@pytest.mark.parametrize("address", ["banana", "tcp://host"])
def test_a_cluster_address_dask_cannot_parse_is_a_clear_error(tmp_path, capsys, address):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"text": "a few words"}) + "\n", encoding="utf-8")
    assert main(["train", str(docs), "--vocab-size", "300", "--model", "m", "--db", str(tmp_path / "m.duckdb"),
                 "--cluster", address, "--no-progress"]) == 2
    assert "is not a scheduler address like tcp://host:8786" in capsys.readouterr().err


def test_holdout_with_a_cluster_says_why_not(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"text": "a few words"}) + "\n", encoding="utf-8")
    assert main(["train", str(docs), "--vocab-size", "300", "--model", "m", "--db", str(tmp_path / "m.duckdb"),
                 "--workers", "1", "--holdout", "0.1", "--cluster-dir", str(tmp_path / "work"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--holdout splits the documents by a query" in err and "not a table or a query" not in err
