"""The import graph of afr_cli/, computed from the source, against the floors afr_cli/layers.py
declares: no circle by file or by room, no import up a floor or sideways to another room on the
same floor, every room declared, and papers/<id>/ holding content only.

Every ``import`` and ``from`` statement counts, those inside functions included (an import made
inside a function to dodge a circle is still an edge of the circle). ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "afr_cli"

COMMAND_IMPORTERS = ("afr_cli.commands", "afr_cli.cli")
PAPER_CONTENT = {"paper.yaml", "published.csv", "page.md", "studies.py"}  # what a paper folder may hold


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
            targets = [
                f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin for alias in node.names
            ]
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
    wrong = [
        f"{m} -> {t}"
        for m, targets in import_graph().items()
        if not within(m, COMMAND_IMPORTERS)
        for t in sorted(targets)
        if within(t, ("afr_cli.commands",))
    ]
    assert not wrong, "modules outside commands/ importing a command: " + ", ".join(wrong)


def room_of(module: str) -> str:
    """The room a module lives in: the package directly under afr_cli/, or the top-level module
    (a paper's study code, afr_cli.papers.<id>.studies, is in the room ``papers``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        rooms.setdefault(room_of(module), set()).update(room_of(t) for t in targets if room_of(t) != room_of(module))
    return rooms


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Every import edge that goes up a floor or sideways to another room on the same floor."""
    from afr_cli.layers import floor_of

    return [
        f"{m} (floor {floor_of(room_of(m))}) -> {t} (floor {floor_of(room_of(t))})"
        for m, targets in sorted(graph.items())
        for t in sorted(targets)
        if room_of(t) != room_of(m) and floor_of(room_of(t)) >= floor_of(room_of(m))
    ]


def test_every_room_is_declared_on_a_floor():
    from afr_cli.layers import FLOORS

    declared = [room for floor in FLOORS for room in floor]
    assert len(declared) == len(set(declared)), "a room declared on two floors"
    assert set(room_graph(import_graph())) == set(declared)


def test_no_circle_between_rooms():
    rooms = room_graph(import_graph())
    circles = strongly_connected(rooms)
    assert not circles, "room circles: " + "; ".join(" -> ".join(a_cycle(rooms, c)) for c in circles)


def test_every_import_runs_down_the_floors():
    wrong = wrong_way(import_graph())
    assert not wrong, "imports up a floor or sideways: " + "; ".join(wrong)


def test_the_floor_check_finds_an_upward_and_a_sideways_import():
    """The check itself: engine -> publish is up, models -> catalogue is sideways, config -> core is down."""
    graph = {
        "afr_cli.engine.runner": {"afr_cli.publish.build"},
        "afr_cli.models.larf": {"afr_cli.catalogue.published"},
        "afr_cli.config.schema": {"afr_cli.core.params"},
    }
    assert [line.split(" (")[0] for line in wrong_way(graph)] == ["afr_cli.engine.runner", "afr_cli.models.larf"]


def test_at_most_eight_modules_at_the_top():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


def test_paper_folders_hold_content_only():
    for folder in sorted(p for p in (PACKAGE / "papers").iterdir() if p.is_dir() and p.name != "__pycache__"):
        extra = {f.name for f in folder.iterdir() if f.name != "__pycache__"} - PAPER_CONTENT
        assert not extra, f"{folder.name}: {sorted(extra)}"
