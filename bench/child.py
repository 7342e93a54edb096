"""Run a benchmark step in a fresh Python process: its own peak RSS, no cache or thread pool shared."""
from __future__ import annotations

import json
import subprocess
import sys


def run_child(code: str, args: list[str], env: dict | None = None, cwd: str | None = None) -> dict:
    """Run `python -c code args...` (in folder `cwd`: its `sqltok` is the one imported); its last
    line of output, parsed as JSON."""
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])
