"""docs/design.md's module map names every module of afr_cli/, each in the bullet of its room,
and every room the floors declare (afr_cli/layers.py): a module added, moved or renamed without
the map following fails here."""

from __future__ import annotations

import re
from pathlib import Path

from afr_cli.layers import FLOORS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "afr_cli"


def map_bullets(text: str) -> dict[str, set[str]]:
    """Room (``engine`` or ``errors``) -> the backticked names in its bullet of the module map."""
    section = text.split("## The module map", 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n- ", section)
    found: dict[str, set[str]] = {}
    for bullet in bullets[1:]:
        rooms = re.findall(r"\*\*`([a-z_]+)(?:/|\.py)`\*\*", bullet)
        names = set(re.findall(r"`([a-z_/]+)`", bullet))
        for room in rooms:
            found[room] = names
    return found


def room_modules(room: Path) -> set[str]:
    """The modules of a package, as the map names them: ``runner``, ``claims/judge``; a paper's
    study code (``papers/<id>/studies.py``) is ``studies``."""
    names = set()
    for path in room.rglob("*.py"):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(room).with_suffix("").as_posix()
        names.add("studies" if room.name == "papers" else relative)
    return names


def test_the_map_names_every_module_in_its_room():
    bullets = map_bullets((ROOT / "docs" / "design.md").read_text(encoding="utf-8"))
    missing = []
    for room in sorted(p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        if room.name not in bullets:
            missing.append(f"{room.name}/ (no bullet)")
            continue
        missing += [f"{room.name}/{m}" for m in sorted(room_modules(room) - bullets[room.name])]
    for module in sorted(PACKAGE.glob("*.py")):
        if module.stem != "__init__" and module.stem not in bullets:
            missing.append(module.name)
    assert not missing, "docs/design.md's module map does not name: " + ", ".join(missing)


def test_the_map_has_a_bullet_for_every_declared_room():
    bullets = map_bullets((ROOT / "docs" / "design.md").read_text(encoding="utf-8"))
    declared = {room for floor in FLOORS for room in floor} - {"afr_cli"}
    assert declared <= set(bullets), sorted(declared - set(bullets))


def test_the_map_check_finds_a_missing_module():
    text = "## The module map\n\n- **`engine/`** (floor 5): `runner`.\n- **`errors.py`**: errors.\n\n## Next\n"
    bullets = map_bullets(text)
    assert bullets == {"engine": {"runner", "engine/"}, "errors": set()}
    assert room_modules(PACKAGE / "engine") - bullets["engine"]  # the real engine has more than `runner`
