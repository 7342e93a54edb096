"""The package's shape: no import cycle in `sqltok/`, no sqltok import hidden inside a function, the
tokenizer families as siblings over one base, and SQL names that leave DuckDB's built-ins working."""
import ast
import importlib
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import sqltok
from sqltok import BPETokenizer, Tokenizer, WordPieceTokenizer
from sqltok.wordpiece._encode import WordPieceDirect

PACKAGE = Path(sqltok.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, tree: ast.AST, top_level: bool) -> set[str]:
    """The sqltok modules `path` imports (at module level, or only inside functions)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    in_functions = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or (id(node) in in_functions) == top_level:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                keep = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(keep + ([base] if base else []))
            if base.startswith("sqltok"):
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
        else:
            found.update(a.name for a in node.names if a.name.startswith("sqltok"))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        targets = _imports(path, ast.parse(path.read_text()), top_level=True)
        # `from sqltok.x import y` names module sqltok.x.y when that is a module, else sqltok.x
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + "."):
                continue  # a package importing its own submodules in __init__ is not a cycle
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_no_sqltok_import_inside_a_function():
    """An import inside a function is how a cycle hides; sqltok's modules import each other at the top."""
    hidden = {}
    for path in PACKAGE.rglob("*.py"):
        found = _imports(path, ast.parse(path.read_text()), top_level=False)
        if found:
            hidden[str(path.relative_to(PACKAGE))] = sorted(found)
    assert hidden == {}


def test_store_knows_nothing_of_tokenizers():
    graph = _graph()
    assert not {m for m in graph["sqltok.store"] if "tokeniz" in m or m.startswith("sqltok.udfs")}


def test_families_are_siblings_over_one_base():
    # (WordPiece's other base is its own C half, `WordPieceDirect`, no family)
    assert BPETokenizer.__bases__ == (Tokenizer,) and WordPieceTokenizer.__bases__ == (Tokenizer, WordPieceDirect)
    assert not issubclass(WordPieceDirect, Tokenizer)
    assert not hasattr(WordPieceTokenizer, "candidates_arrow") and not hasattr(WordPieceTokenizer, "letter_mask")
    assert not hasattr(Tokenizer, "from_model")  # the base knows no family


def test_base_api_works_for_every_family(bundled):
    text = "Hello world, hello!"
    for tok in (Tokenizer.load(bundled("o200k_base.tiktoken")), Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))):
        ids = tok.encode(text)
        assert tok.encode_ordinary(text) == ids == tok.encode_batch([text])[0] == tok.encode_ordinary_batch([text])[0]
        assert tok.token_count(text) == len(ids)
        assert tok.decode(ids).lower() == text.lower()
        assert tok.decode_bytes(ids) == tok.decode(ids).encode()
        assert tok.decode_tokens_bytes(ids[:2]) == [tok.decode_single_token_bytes(i) for i in ids[:2]]
        assert len(tok.tokens_arrow(pa.array([text]))[0]) == len(ids)
        assert repr(tok).startswith(f"<{type(tok).__name__} ")


#: DuckDB built-ins that share a name with a sqltok function, and calls that must give the same result
#: before and after `sqltok.register` (a DuckDB upgrade that adds another such name fails here).
BUILTIN_CALLS = {
    "encode": ["SELECT encode('héllo')"],
    "decode": ["SELECT decode('\\x61\\xC3\\xA9'::BLOB)", "SELECT decode('\\xFF\\x61'::BLOB, 'replace')",
               "SELECT decode('\\xFF\\x61'::BLOB, 'ignore')"],
}
SIGNATURES = ("SELECT function_name, parameter_types::VARCHAR FROM duckdb_functions() "
              "WHERE function_type IN ('scalar', 'macro', 'table_macro', 'table', 'aggregate')")


def test_sql_names_leave_duckdb_builtins_working():
    """sqltok's overloads (a tokenizer name first) sit beside the built-ins of the same name; a
    built-in with one of sqltok's exact signatures would make `register` fail."""
    con = duckdb.connect()
    builtin = con.execute(SIGNATURES).fetchall()
    before = {q: con.execute(q).fetchall() for calls in BUILTIN_CALLS.values() for q in calls}
    sqltok.register(con)
    ours = set(con.execute(SIGNATURES).fetchall()) - set(builtin)
    names = {n for n, _ in ours}
    shared = {n for n, _ in builtin if n in names}
    assert shared == set(BUILTIN_CALLS), "a DuckDB built-in shares a name with sqltok: add its calls here"
    for q, result in before.items():
        assert con.execute(q).fetchall() == result, q


@pytest.mark.parametrize("query", ["SELECT decode(NULL::BLOB)", "SELECT encode(NULL::VARCHAR)"])
def test_builtins_keep_their_null_handling(con, query):
    assert con.execute(query).fetchall() == [(None,)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="looks for GNU OpenMP's symbols (Linux)")
def test_parallel_modules_are_built_with_openmp():
    """Every extension with parallel loops (its own prange, or the rows driver of parallel_rows.pxd)
    was built with OpenMP: setup.py adds the flag by module name, and a module left off that list
    compiles its prange to a plain loop and runs on one thread, silently (the split-word kernels
    once did)."""
    parallel = sorted(_module_name(p) for p in PACKAGE.rglob("*.pyx")
                      if "prange" in p.read_text() or "parallel_rows" in p.read_text())
    assert "sqltok.bpe._encode" in parallel and "sqltok.wordpiece._word_splits" in parallel
    serial = [m for m in parallel if b"GOMP_parallel" not in Path(importlib.import_module(m).__file__).read_bytes()]
    assert serial == []


def test_token_tables_by_id(bundled):
    """Every family's token bytes and texts by id, one array each, agree with the per-id calls."""
    for tok in (Tokenizer.load(bundled("r50k_base.tiktoken")), Tokenizer.load(bundled("bert-base-uncased_tokenizer.json"))):
        tokens, texts = tok.token_bytes_array(), tok.token_strings()
        assert len(tokens) == len(texts) == tok.n_vocab
        for i in (0, 1, 200, 1000, tok.n_vocab - 1):
            assert tokens[i].as_py() == tok.decode_single_token_bytes(i)
            assert texts[i].as_py() == tok.decode_single_token_bytes(i).decode("utf-8", "replace")


@pytest.mark.parametrize("ids", [[], [1, 2, 3], (5,), range(10), list(range(300, 400)), range(500, 700)])
def test_decode_takes_any_integer_sequence(bundled, ids):
    import numpy as np

    tok = Tokenizer.load(bundled("r50k_base.tiktoken"))
    assert tok.decode(ids) == tok.decode(np.array(list(ids), np.int64)) == tok.decode_bytes(list(ids)).decode("utf-8", "replace")
