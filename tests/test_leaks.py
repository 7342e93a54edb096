"""No leak under LeakSanitizer: `fuzz/leaks.py` replays every harness's saved inputs (the encoders,
the pretokenizer, the normalizers, every model reader, good and bad files) under gcc's LSan runtime
and fails when unreachable memory grows with the replays; a planted leak shows that it would."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("atheris", reason="the harnesses need atheris")

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"


def _liblsan() -> str:
    try:
        path = subprocess.run(["gcc", "-print-file-name=liblsan.so"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        path = ""
    if not os.path.isabs(path) or not os.path.exists(path):
        pytest.skip("gcc's LeakSanitizer runtime (liblsan) is not installed")
    return path


def _leak_check(tmp_path: Path, *args: str, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "LD_PRELOAD": _liblsan(), "PYTHONMALLOC": "malloc", "LSAN_OPTIONS": "exitcode=0",
           "SQLTOK_FUZZ_CACHE": str(tmp_path / "cache")}
    if extra_path is not None:
        env["PYTHONPATH"] = f"{extra_path}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([sys.executable, str(FUZZ / "leaks.py"), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_no_harness_leaks(tmp_path):
    run = _leak_check(tmp_path, "2")
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert run.stdout.count("unreachable") == 5, run.stdout


def test_a_planted_leak_is_found(tmp_path, monkeypatch):
    (tmp_path / "leaky.py").write_text(
        "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.malloc.restype = ctypes.c_void_p\n\n"
        "def test_one(data: bytes) -> None:\n    libc.malloc(len(data) + 64)\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    with zipfile.ZipFile(corpus / "leaky.zip", "w") as z:
        for i in range(8):
            z.writestr(str(i), b"x" * i)
    monkeypatch.setenv("SQLTOK_FUZZ_CORPUS", str(corpus))
    run = _leak_check(tmp_path, "2", "leaky", extra_path=tmp_path)
    assert run.returncode == 1 and "leaky: 8 inputs" in run.stdout, run.stdout + run.stderr[-4000:]
