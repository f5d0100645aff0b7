"""The rooms of the code (docs/architecture.md), read from the source: no import circle
in src/chaja (imports inside functions count; those under ``if TYPE_CHECKING`` do not),
each room importing only the rooms below it, no module over 400 lines, no function
over 60."""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "chaja"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
#: functions that may be longer, and why (docs/architecture.md)
LONG_ALLOWED = {
    "chaja.encoders.e5_graph.build_e5_graph": "a table-like graph builder: one node after another, in order",
}


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST):
    """Every import in ``tree``, blocks under ``if TYPE_CHECKING`` left out."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    """module → the chaja modules it imports (``from a import b`` counts as ``a.b`` when
    that is a module, else ``a``)."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            graph[name].update(t for t in targets if t in known and t != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    found = circles(import_graph())
    assert not found, "import circles: " + "; ".join(" ↔ ".join(c) for c in found)


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


#: room → the rooms above it, which it may not import (docs/architecture.md)
OUT_OF_BOUNDS = {
    "chaja.readers": ("chaja.search", "chaja.stores", "chaja.hub", "chaja.index", "chaja.cli", "chaja.eval"),
    "chaja.stores": ("chaja.search", "chaja.hub", "chaja.index", "chaja.ingest", "chaja.cli", "chaja.eval"),
    "chaja.search": ("chaja.hub", "chaja.index", "chaja.ingest", "chaja.cli", "chaja.eval"),
    "chaja.encoders": ("chaja.search", "chaja.stores", "chaja.hub", "chaja.index", "chaja.cli", "chaja.eval"),
}


def test_each_room_imports_only_the_rooms_below_it():
    graph = import_graph()
    wrong = {name: sorted(t for t in targets if t.startswith(above))
             for room, above in OUT_OF_BOUNDS.items()
             for name, targets in graph.items() if name.startswith(room)}
    wrong = {name: targets for name, targets in wrong.items() if targets}
    assert not wrong, f"imports from a room above: {wrong}"


def test_no_module_over_400_lines():
    over = {name: n for name, path in modules().items()
            if (n := path.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES}
    assert not over, f"modules over {MAX_MODULE_LINES} lines: {over}"


def test_no_function_over_60_lines():
    over = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES and f"{name}.{node.name}" not in LONG_ALLOWED:
                    over[f"{name}.{node.name}"] = lines
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines: {over}"
