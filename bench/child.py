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


#: Child code defining `read_docs(corpus, text_column, lines)`: a corpus's non-NULL documents as a list,
#: read through sqltok's `Source` (Parquet, JSONL, or a text file of one document a line), for peers
#: that train from Python strings.
READ_DOCS = r"""
import duckdb, sqltok
def read_docs(corpus, col, lines):
    con = duckdb.connect()
    sqltok.register(con)
    src = sqltok.Source(path=corpus, text_key=col, text_mode="line" if lines else None)
    docs = [r[0] for r in con.execute(f"SELECT text FROM ({src.query()}) WHERE text IS NOT NULL").fetchall()]
    con.close()
    return docs
"""
