"""What the units ``afr reproduce --plan`` would compute will cost, from measured seconds per unit.

A unit's cost depends mostly on its dataset and base ensemble (Airfoil's units cost twice
Friedman1's), so a store's recorded seconds are kept per (dataset, base) and a missing unit is
priced by the first measurement that holds its (dataset, base): the experiment's own store under
the plan's root, then the committed store of the same experiment (``results/<store>`` of the
project, which records every unit's CPU seconds). Only a unit whose (dataset, base) none of them
holds is priced at the mean unit of the first. So a run from scratch under a fresh ``--root`` is
projected from the committed stores, and the plan says which store each figure comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from afr_cli.paths import PROJECT_ROOT
from afr_cli.store import has_results, open_existing

COMMITTED_ROOT = PROJECT_ROOT / "results"


@dataclass(frozen=True)
class UnitCosts:
    """The measured seconds of one store's units: per (dataset, base) and over all of them."""

    where: str  # how the plan names the store: "its store" or "committed results/<store>"
    measured_in: str  # "CPU" (recorded process time) or "wall" (a store made before CPU was recorded)
    per_cell: dict[tuple[str, str], float]  # (dataset, base id) -> mean seconds of a unit
    overall: float  # mean seconds of a unit over the whole store
    forest: float | None = None  # mean recorded seconds of a unit's forest step (fit, leaf statistics)


@dataclass(frozen=True)
class Projection:
    """The projected seconds of a list of units and the measurements they rest on."""

    seconds: float
    sources: tuple[UnitCosts, ...]  # every measurement that priced a unit, in the order given
    at_mean: int = 0  # units whose (dataset, base) no measurement holds, priced at a mean unit

    def label(self) -> str:
        """Where the figure comes from, e.g. ``from CPU`` (its own store's recorded process time)
        or ``from CPU of committed results/dm_soft``."""
        parts = [s.measured_in if s.where == "its store" else f"{s.measured_in} of {s.where}" for s in self.sources]
        text = "from " + " and ".join(dict.fromkeys(parts))
        if self.at_mean:
            text += f"; {self.at_mean} unit{'s' * (self.at_mean != 1)} of an unmeasured dataset at the mean unit"
        return text


def unit_costs(directory: Path, where: str) -> UnitCosts | None:
    """The recorded seconds per unit of the store (or committed export) in ``directory``: CPU
    seconds where units record them, else wall seconds; None when it holds no unit."""
    if not has_results(directory):
        return None
    units = open_existing(directory).frame("units")
    if not len(units):
        return None
    cpu = units["cpu_seconds"] if "cpu_seconds" in units.columns else None
    if cpu is not None and cpu.notna().any():
        timed, column, measured = units[cpu.notna()], "cpu_seconds", "CPU"
    else:
        timed, column, measured = units, "seconds", "wall"
    per_cell = {(str(d), str(b)): float(s) for (d, b), s in timed.groupby(["dataset", "base"])[column].mean().items()}
    forest = units["forest_seconds"].dropna() if "forest_seconds" in units.columns else None
    return UnitCosts(where, measured, per_cell, float(timed[column].mean()),
                     float(forest.mean()) if forest is not None and len(forest) else None)


def committed_costs(store: str, own: Path) -> UnitCosts | None:
    """The committed store of the same experiment (``results/<store>`` of the project), unless it
    is the plan's own store (the default root)."""
    committed = COMMITTED_ROOT / store
    if own.resolve() == committed.resolve():
        return None
    return unit_costs(committed, f"committed results/{store}")


def project(cells: list[tuple[str, str]], measured: list[UnitCosts]) -> Projection | None:
    """Seconds of the units of ``cells`` ((dataset, base id), one entry per unit), each priced by
    the first of ``measured`` holding its cell, else at the first one's mean unit; None when
    nothing is measured."""
    if not measured:
        return None
    seconds, used, at_mean = 0.0, [], 0
    for cell in cells:
        source = next((m for m in measured if cell in m.per_cell), None)
        if source is None:
            source, at_mean = measured[0], at_mean + 1
            seconds += source.overall
        else:
            seconds += source.per_cell[cell]
        if source not in used:
            used.append(source)
    return Projection(seconds, tuple(m for m in measured if m in used), at_mean)
