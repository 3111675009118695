"""The config reference page, docs/config.md: generated from the schema table and the registries.

``reference_page()`` is the page's whole text: one table per config section (afr_cli.config.schema),
then the registered families' hyperparameters and ensembles' parameters (what a model's
``params``/``grid`` and a base's keys may hold). ``afr docs config`` writes it; a test fails when
the committed page differs from it.
"""

from __future__ import annotations

from pathlib import Path

from afr_cli.config.schema import reference_markdown
from afr_cli.ensembles import ENSEMBLES
from afr_cli.models import FAMILIES

REFERENCE_FILE = Path("docs") / "config.md"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _registries() -> str:
    lines = [
        "## Families (`models[].family`) and their hyperparameters (`params`, `grid`)",
        "",
        "| family | hyperparameter | kind | allowed | default | what it is |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for fam in FAMILIES.values():
        if not fam.params:
            lines.append(f"| `{fam.name}` | (none) | | | | {_cell(fam.summary)} |")
        for p in fam.params:
            lines.append(
                f"| `{fam.name}` | `{p.name}` | {p.kind} | {_cell(p.allowed())} | "
                f"{_cell(p.show_default())} | {_cell(p.doc)} |"
            )
    lines += [
        "",
        "## Ensembles (`bases[].kind`) and their parameters (keys of a base entry)",
        "",
        "| kind | parameter | allowed | default | what it is |",
        "| --- | --- | --- | --- | --- |",
    ]
    for ens in ENSEMBLES.values():
        for p in ens.params:
            lines.append(
                f"| `{ens.name}` | `{p.name}` | {_cell(p.allowed())} | {_cell(p.show_default())} | {_cell(p.doc)} |"
            )
    lines += [
        "",
        "A family or ensemble of your own is named `module:Class` and declares its parameters "
        "the same way (`afr_cli.core.params.Param`).",
    ]
    return "\n".join(lines)


def reference_page() -> str:
    """The text of docs/config.md."""
    return reference_markdown(_registries())
