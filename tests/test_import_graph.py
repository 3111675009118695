"""The import graph of afr_cli/, computed from the source: no cycle, no command imported by the
library, and the library packages importing nothing from the experiment layers above them.

Every ``import`` and ``from`` statement counts, those inside functions included (an import made
inside a function to dodge a circle is still an edge of the circle). ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "afr_cli"

LIBRARY_PACKAGES = ("afr_cli.dm", "afr_cli.solvers", "afr_cli.ensembles", "afr_cli.data", "afr_cli.store")
EXPERIMENT_LAYERS = ("afr_cli.protocol", "afr_cli.runner", "afr_cli.config", "afr_cli.commands")
COMMAND_IMPORTERS = ("afr_cli.commands", "afr_cli.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The afr_cli modules ``name`` (at ``path``) imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import afr_cli.x.y` of a name, not a module
                target = target.rpartition(".")[0]
            if target.startswith("afr_cli") and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module (each a circle or several)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One circle through the component's first module, for the failure message."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                todo.append(w)
    return component


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_graph_sees_imports_inside_functions_and_relative_ones(tmp_path):
    """The graph builder itself: a function-level import, a relative one and `from pkg import module`."""
    pkg = tmp_path / "afr_cli"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import leaf\n")
    (pkg / "sub" / "leaf.py").write_text("def f():\n    from ..top import g\n")
    (pkg / "top.py").write_text("from afr_cli.sub import leaf\n")
    known = {"afr_cli", "afr_cli.sub", "afr_cli.sub.leaf", "afr_cli.top"}
    assert imports_of("afr_cli.sub", pkg / "sub" / "__init__.py", known) == {"afr_cli.sub.leaf"}
    assert imports_of("afr_cli.sub.leaf", pkg / "sub" / "leaf.py", known) == {"afr_cli.top"}
    assert imports_of("afr_cli.top", pkg / "top.py", known) == {"afr_cli.sub.leaf"}
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert a_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    graph = import_graph()
    circles = strongly_connected(graph)
    assert not circles, "import circles: " + "; ".join(" -> ".join(a_cycle(graph, c)) for c in circles)


def test_only_the_cli_imports_commands():
    wrong = [f"{m} -> {t}" for m, targets in import_graph().items() if not within(m, COMMAND_IMPORTERS)
             for t in sorted(targets) if within(t, ("afr_cli.commands",))]
    assert not wrong, "modules outside commands/ importing a command: " + ", ".join(wrong)


def test_library_packages_import_no_experiment_layer():
    wrong = [f"{m} -> {t}" for m, targets in import_graph().items() if within(m, LIBRARY_PACKAGES)
             for t in sorted(targets) if within(t, EXPERIMENT_LAYERS)]
    assert not wrong, "library modules importing protocol/runner/config/commands: " + ", ".join(wrong)
