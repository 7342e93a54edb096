"""A short libFuzzer run of every harness in fuzz/ (atheris): each must finish without a finding.

The harnesses compare sqltok with its oracles (regex, tiktoken, HF tokenizers, unicodedata2) and feed
mutated real tokenizer files to `Tokenizer.load`; longer runs: `python fuzz/<target>.py -max_total_time=600`.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris", reason="atheris (libFuzzer for Python) is not installed: no fuzz runs")

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
HARNESSES = ["pretokenize", "encode_tiktoken", "encode_wordpiece", "normalize", "readers"]
SECONDS = 4


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-cache")


def test_every_harness_is_run():
    assert sorted(p.stem for p in FUZZ.glob("*.py") if p.stem not in ("fuzz_support", "leaks")) == sorted(HARNESSES)


@pytest.mark.parametrize("harness", HARNESSES)
def test_short_fuzz_run(harness, cache, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    args = [sys.executable, str(FUZZ / f"{harness}.py"), str(corpus), f"-max_total_time={SECONDS}",
            "-runs=200000", "-timeout=20", "-rss_limit_mb=3072", "-max_len=65536",
            f"-artifact_prefix={tmp_path}/"]
    env = {**os.environ, "SQLTOK_FUZZ_CACHE": str(cache)}
    run = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, f"{harness}: libFuzzer found a failure\n{run.stderr[-6000:]}"
    assert "DONE" in run.stderr, run.stderr[-3000:]
