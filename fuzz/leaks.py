"""Leak check of the harnesses under LeakSanitizer: replay each harness's saved inputs once, ask LSan
what is unreachable (what importing leaves behind, the baseline), then twice replay them `repeat`
more times and ask again. Code that leaks per call grows both times; something a library sets up
lazily once (a type object on first use) grows once. The exit status says whether any grew twice.

    LD_PRELOAD=$(gcc -print-file-name=liblsan.so) PYTHONMALLOC=malloc \\
        python fuzz/leaks.py [repeat] [harness ...]

Inputs come from `fuzz/corpus/<harness>.zip` (or the folder `SQLTOK_FUZZ_CORPUS` names): the corpus a
libFuzzer run saved (`python fuzz/pretokenize.py DIR -max_total_time=60`, then zip DIR's files).
"""
import ctypes
import importlib
import os
import re
import sys
import tempfile
import zipfile
from pathlib import Path

HARNESSES = ["pretokenize", "encode_tiktoken", "encode_wordpiece", "normalize", "readers"]
CORPUS = Path(os.environ.get("SQLTOK_FUZZ_CORPUS", Path(__file__).resolve().parent / "corpus"))


def inputs(harness: str) -> list[bytes]:
    with zipfile.ZipFile(CORPUS / f"{harness}.zip") as z:
        return [z.read(n) for n in sorted(z.namelist())]


def leaked_bytes(lsan: ctypes.CDLL) -> int:
    """The bytes LSan reports unreachable now (its report goes to stderr; read back from a file)."""
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            lsan.__lsan_do_recoverable_leak_check()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        report = out.read().decode(errors="replace")
    m = re.search(r"SUMMARY: LeakSanitizer: (\d+) byte", report)
    return int(m.group(1)) if m else 0


def main(repeat: int, harnesses: list[str]) -> int:
    try:
        lsan = ctypes.CDLL(None)
        lsan.__lsan_do_recoverable_leak_check
    except AttributeError:
        sys.exit("fuzz/leaks.py runs under LeakSanitizer: LD_PRELOAD=$(gcc -print-file-name=liblsan.so)")
    tests = {h: (importlib.import_module(h).test_one, inputs(h)) for h in harnesses}
    grew = 0
    for h, (test_one, data) in tests.items():
        for d in data:
            test_one(d)
        seen = [leaked_bytes(lsan)]
        for _ in range(2):
            for _ in range(repeat):
                for d in data:
                    test_one(d)
            seen.append(leaked_bytes(lsan))
        print(f"{h}: {len(data)} inputs x {2 * repeat + 1}: unreachable "
              + " -> ".join(f"{b:,}" for b in seen) + " bytes", flush=True)
        grew += seen[0] < seen[1] < seen[2]
    return 1 if grew else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args.pop(0)) if args and args[0].isdigit() else 3
    sys.exit(main(n, args or HARNESSES))
