"""The import graph of the sqltok package: no cycles, and the model store a leaf below the tokenizers."""
from __future__ import annotations

import ast
from pathlib import Path

import sqltok

ROOT = Path(sqltok.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ("sqltok",) + path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, known: set[str], top_level_only: bool) -> set[str]:
    """The sqltok modules `name` imports (only those run at import time with `top_level_only`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in _walk(tree, top_level_only):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(head + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m in known and m != name}


def _walk(node: ast.AST, skip_functions: bool):
    """Every node below `node`; with `skip_functions`, none inside a function body."""
    for child in ast.iter_child_nodes(node):
        if skip_functions and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield child
        yield from _walk(child, skip_functions)


def _graph(top_level_only: bool) -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules), top_level_only) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        path.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return path[path.index(v):] + [v]
            if v not in state and (found := visit(v)):
                return found
        path.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state and (found := visit(u)):
            return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_at_import_time():
    assert _cycle(_graph(top_level_only=True)) is None


def test_store_and_training_stages_are_below_the_tokenizers():
    graph = _graph(top_level_only=False)

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for v in graph[todo.pop()] - seen:
                seen.add(v)
                todo.append(v)
        return seen

    tokenizer_layer = {m for m in graph if m.endswith("tokenizer") or m.endswith("tokenizers")
                       or m.startswith("sqltok.udfs")}
    assert {"sqltok.bpe.tokenizer", "sqltok.named_tokenizers", "sqltok.udfs"} <= tokenizer_layer
    for leaf in ("sqltok.store", "sqltok.store_migration", "sqltok.training.counting",
                 "sqltok.training.corpus", "sqltok.training.work_tables"):
        assert reachable(leaf) & tokenizer_layer == set(), leaf
    assert _cycle({m: graph[m] for m in reachable("sqltok.store") | {"sqltok.store"}}) is None
