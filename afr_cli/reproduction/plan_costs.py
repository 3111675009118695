"""What the units ``afr reproduce --plan`` would compute will cost, from measured seconds per unit.

A unit's cost depends mostly on its dataset and base ensemble (Airfoil's units cost twice
Friedman1's), so a store's recorded seconds are kept per (dataset, base) and a missing unit is
priced by the first measurement that holds its (dataset, base): the experiment's own store under
the plan's root, then the committed store of the same experiment (``results/<store>`` of the
project, which records every unit's CPU seconds). Only a unit whose (dataset, base) none of them
holds is priced at the mean unit of the first. So a run from scratch under a fresh ``--root`` is
projected from the committed stores, and the plan says which store each figure comes from.

An experiment no committed store runs (a config of your own on the papers' datasets) is priced
model by model (``family_costs``): each of its models at the committed stores' seconds per grid
point of the same family on the same dataset and base, times its own grid points, plus a unit's
work outside the models (splitting, fitting the forest) measured the same way. Those are wall
seconds (per model, only wall time is recorded), and the plan says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from afr_cli.config.experiment import Experiment
from afr_cli.core.paths import PROJECT_ROOT
from afr_cli.store import find_stores, has_results, open_existing

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
    return UnitCosts(
        where,
        measured,
        per_cell,
        float(timed[column].mean()),
        float(forest.mean()) if forest is not None and len(forest) else None,
    )


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


def _points(grid: dict) -> int:
    """Grid points of a model: the product of its hyperparameters' value counts (1 without a grid)."""
    return math.prod(len(v) if isinstance(v, (list, tuple)) else 1 for v in (grid or {}).values())


@lru_cache(maxsize=1)
def _committed_model_seconds() -> tuple[dict, dict]:
    """From every committed store: wall seconds per grid point of a model, by (family, dataset,
    base id), and a unit's wall seconds outside its models, by (dataset, base id); each a list of
    per-unit measurements."""
    per_point, outside = defaultdict(list), defaultdict(list)
    for directory in find_stores(COMMITTED_ROOT):
        store = open_existing(directory)
        config = store.manifest().get("config") or {}
        models = {m.get("id"): m for m in config.get("models", []) if isinstance(m, dict)}
        results, units = store.frame("results"), store.frame("units")
        if not len(results) or not len(units):
            continue
        key = ["dataset", "base", "rep", *[a for a in ("train_fraction", "noise_eta") if a in results.columns]]
        for row in results.itertuples(index=False):
            model = models.get(row.model)
            if model is not None and model.get("family"):
                per_point[(model["family"], row.dataset, row.base)].append(row.seconds / _points(model.get("grid")))
        spent = results.groupby(key)["seconds"].sum()
        for row in units.itertuples(index=False):
            inside = spent.get(tuple(getattr(row, k) for k in key))
            if inside is not None:
                outside[(row.dataset, row.base)].append(max(0.0, row.seconds - inside))
    return per_point, outside


def family_costs(exp: Experiment) -> UnitCosts | None:
    """Seconds of a unit of ``exp`` per (dataset, base), priced model by model from the committed
    stores (see the module doc); a cell where one of its models' families was never run on that
    dataset and base is left out. None when no cell can be priced."""
    per_point, outside = _committed_model_seconds()
    families = [(m.family, _points(m.grid)) for m in exp.models if m.family]
    per_cell = {}
    for dataset in exp.datasets:
        for base in exp.bases:
            rest = outside.get((dataset, base.id))
            parts = [per_point.get((family, dataset, base.id)) for family, _ in families]
            if rest and all(parts):
                per_cell[(dataset, base.id)] = sum(rest) / len(rest) + sum(
                    n * sum(p) / len(p) for (_, n), p in zip(families, parts)
                )
    if not per_cell:
        return None
    names = ", ".join(dict.fromkeys(family for family, _ in families))
    return UnitCosts(
        f"the committed stores' {names} on the same dataset and base, per grid point",
        "wall",
        per_cell,
        sum(per_cell.values()) / len(per_cell),
    )
