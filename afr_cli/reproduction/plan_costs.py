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
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from afr_cli.config.experiment import Experiment
from afr_cli.core.paths import PROJECT_ROOT
from afr_cli.errors import AfrInputError
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
        trained = {i: m for i, m in models.items() if m.get("family")}
        family = results["model"].map({i: m["family"] for i, m in trained.items()})
        points = results["model"].map({i: _points(m.get("grid")) for i, m in trained.items()})
        priced = results.assign(family=family, per_point=results["seconds"] / points)[family.notna()]
        for (name, dataset, base), seconds in priced.groupby(["family", "dataset", "base"], sort=False)["per_point"]:
            per_point[(name, dataset, base)].extend(seconds.tolist())
        spent = results.groupby(key, sort=False)["seconds"].sum().rename("inside").reset_index()
        joined = units[[*key, "seconds"]].merge(spent, on=key, how="inner")
        rest = (joined["seconds"] - joined["inside"]).clip(lower=0.0)
        for (dataset, base), seconds in rest.groupby([joined["dataset"], joined["base"]], sort=False):
            outside[(dataset, base)].extend(seconds.tolist())
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


CACHED_FOREST_PER_TREE = 1e-5  # seconds per tree below which a unit's forest step read a cached forest


@dataclass(frozen=True)
class CostModel:
    """Seconds of a unit's work fitted on the committed stores: per family, the seconds of one
    grid point as ``exp(a) * rows**b * trees`` (rows: the unit's training rows; trees: the base's
    tree count), and the same form for a unit's work outside its models (split, forest fit)."""

    per_family: dict[str, tuple[float, float]]  # family -> (a, b)
    outside: tuple[float, float]
    units: int  # committed units the fit rests on

    def point_seconds(self, family: str, rows: int, trees: int) -> float | None:
        """Seconds of one grid point of ``family``; None for a family the stores never ran."""
        fitted = self.per_family.get(family)
        return None if fitted is None else _power(fitted, rows, trees)

    def outside_seconds(self, rows: int, trees: int) -> float:
        return _power(self.outside, rows, trees)


def _power(coefficients: tuple[float, float], rows: int, trees: int) -> float:
    a, b = coefficients
    return math.exp(a) * max(rows, 1) ** b * max(trees, 1)


def _fit(rows: np.ndarray, seconds_per_tree: np.ndarray) -> tuple[float, float] | None:
    """(a, b) of log(seconds per tree) = a + b log(rows) by least squares; the exponent kept in
    [0, 3] (a family measured on one size of data gets b = 1: cost in proportion to rows)."""
    keep = (seconds_per_tree > 0) & (rows > 0)
    x, y = np.log(rows[keep]), np.log(seconds_per_tree[keep])
    if len(x) == 0:
        return None
    if np.ptp(x) < 0.5:
        return float(np.mean(y - x)), 1.0
    b, a = np.polyfit(x, y, 1)
    b = float(min(max(b, 0.0), 3.0))
    return float(np.mean(y - b * x)), b


def _trees(entry: dict) -> tuple[str, int] | None:
    """(base id, tree count) of a committed config's base entry; None if it no longer loads."""
    from afr_cli.ensembles import get_ensemble

    try:
        ensemble = get_ensemble(entry["kind"])
        params = ensemble.check_params({k: v for k, v in entry.items() if k not in ("kind", "id")}, "base")
    except Exception:  # a committed base of a kind no longer registered cannot be priced
        return None
    return str(entry.get("id") or ensemble.default_id(params)), int(params.get("n_estimators") or 1)


@lru_cache(maxsize=1)
def committed_cost_model() -> CostModel | None:
    """The cost model fitted on every committed store's units (one fit per process)."""
    import pandas as pd

    points_frames, outside_frames = [], []
    for directory in find_stores(COMMITTED_ROOT):
        store = open_existing(directory)
        config = store.manifest().get("config") or {}
        models = {m.get("id"): m for m in config.get("models", []) if isinstance(m, dict) and m.get("family")}
        trees = dict(t for t in (_trees(b) for b in config.get("bases", []) if isinstance(b, dict)) if t)
        results, units = store.frame("results"), store.frame("units")
        if not len(results) or not len(units) or not models or not trees:
            continue
        key = ["dataset", "base", "rep", *[a for a in ("train_fraction", "noise_eta") if a in results.columns]]
        results = results.assign(seconds=pd.to_numeric(results["seconds"], errors="coerce"))
        units = units.assign(
            **{
                c: pd.to_numeric(units[c], errors="coerce")
                for c in ("seconds", "n_train", "forest_seconds")
                if c in units
            }
        )
        rows = results.merge(units[[*key, "n_train"]], on=key, how="inner")
        rows = rows[rows["model"].isin(list(models)) & rows["base"].isin(list(trees))]
        if len(rows):
            family = rows["model"].map({m: spec["family"] for m, spec in models.items()})
            points = rows["model"].map({m: _points(spec.get("grid")) for m, spec in models.items()})
            per_tree = rows["seconds"] / points / rows["base"].map(trees).astype(float)
            points_frames.append(pd.DataFrame({"family": family, "rows": rows["n_train"], "s": per_tree}))
        inside = results.groupby(key)["seconds"].sum().rename("inside").reset_index()
        spent = units.merge(inside, on=key, how="inner")
        spent = spent[spent["base"].isin(list(trees))]
        # a unit whose forest step read a forest fitted before (the forest cache, or another
        # experiment's fused unit) says nothing of what fitting one costs: a new experiment fits its own
        forest = spent["forest_seconds"] if "forest_seconds" in spent else pd.Series(0.0, index=spent.index)
        spent = spent[forest.fillna(0.0) / spent["base"].map(trees).astype(float) >= CACHED_FOREST_PER_TREE]
        left = (spent["seconds"] - spent["inside"]).clip(lower=0) / spent["base"].map(trees).astype(float)
        outside_frames.append(pd.DataFrame({"rows": spent["n_train"], "s": left}))
    if not points_frames:
        return None
    points = pd.concat(points_frames, ignore_index=True)
    outside = pd.concat(outside_frames, ignore_index=True)
    per_family = {}
    for family, group in points.groupby("family"):
        fitted = _fit(group["rows"].to_numpy(float), group["s"].to_numpy(float))
        if fitted is not None:
            per_family[str(family)] = fitted
    rest = _fit(outside["rows"].to_numpy(float), outside["s"].to_numpy(float)) or (math.log(1e-4), 1.0)
    return CostModel(per_family, rest, len(outside))


def modelled_costs(exp: Experiment, train_rows: dict[str, int], model: CostModel | None = None) -> UnitCosts | None:
    """Seconds of a unit of ``exp`` per (dataset, base) from the fitted cost model (each model's
    family at the dataset's training rows and the base's trees, times its grid points, plus the
    work outside the models); a family the committed stores never ran is priced at the costliest
    fitted family, and the label says so. None when nothing was fitted."""
    model = model or committed_cost_model()
    if model is None or not model.per_family:
        return None
    unknown = sorted({m.family for m in exp.models if m.family and m.family not in model.per_family})
    costliest = max(model.per_family, key=lambda f: model.point_seconds(f, 1000, 100) or 0.0)
    per_cell = {}
    for dataset in [d for d in exp.datasets if d in train_rows]:
        rows = train_rows[dataset]
        for base in exp.bases:
            trees = int(base.params.get("n_estimators") or 1)
            seconds = model.outside_seconds(rows, trees)
            for m in exp.models:
                if m.family:
                    family = m.family if m.family in model.per_family else costliest
                    seconds += len(m.grid_points()) * (model.point_seconds(family, rows, trees) or 0.0)
            per_cell[(dataset, base.id)] = seconds
    if not per_cell:
        return None
    where = (
        f"the cost model fitted on {model.units} committed units (per family: seconds per grid point and tree "
        "against training rows)"
    )
    if unknown:
        where += f"; {', '.join(unknown)} never measured, priced as {costliest}"
    return UnitCosts(where, "wall", per_cell, sum(per_cell.values()) / len(per_cell))


def _train_rows(exp: Experiment) -> tuple[dict[str, int], dict]:
    """(training rows of a unit per dataset, the datasets' arrays when they could be read): a
    unit's rows times the mean training fraction of the protocol's axes. A dataset that cannot
    be read now (not fetched yet) keeps the registry's row count, and no arrays are returned."""
    from afr_cli.data.registry import DATASETS
    from afr_cli.engine.experiment_data import load_experiment_data

    fractions = [f for f, _ in exp.protocol.axes()]
    share = sum(fractions) / len(fractions)
    try:
        data, _ = load_experiment_data(exp)
    except AfrInputError:
        data = {}
    rows = {d: len(data[d][1]) if d in data else getattr(DATASETS.get(d), "n", None) for d in exp.datasets}
    return {d: max(1, round(n * share)) for d, n in rows.items() if n}, data


def probe_seconds(exp: Experiment, unit: tuple, data: dict) -> float:
    """CPU seconds of computing one unit (dataset, base index, axis point, rep) in this process,
    on one BLAS thread as a worker runs it; nothing is stored."""
    from threadpoolctl import threadpool_limits

    from afr_cli.engine.tasks import UnitTask, run_task

    dataset, b, axis, rep = unit
    X, y = data[dataset]
    started = time.process_time()
    with threadpool_limits(limits=1):
        run_task(exp, UnitTask(dataset, rep, ((b, axis),)), X, y)
    return time.process_time() - started


def estimated_costs(
    exp: Experiment, todo: list[tuple], model: CostModel | None = None, probe: bool = True
) -> UnitCosts | None:
    """Seconds of a unit of an experiment nothing of which is measured, per (dataset, base): the
    cost model fitted on the committed stores (``modelled_costs``) gives each cell's share, and
    one unit computed now (a probe of the cell the model finds cheapest, timed on its second
    computation: the first in a process also pays for lazy imports) scales it to this code on
    this machine. Without the datasets' arrays (not fetched yet), without ``probe``, or when the
    probe's unit fails (the run will say why, in one line), the cost model alone prices it; the
    label says which."""
    rows, data = _train_rows(exp)
    modelled = modelled_costs(exp, rows, model)
    if modelled is None:
        return None
    if not probe:
        return modelled
    if not data or not todo:
        return replace(modelled, where=modelled.where + "; no probe: the datasets are not all readable now")
    cell = min(modelled.per_cell, key=modelled.per_cell.get)
    unit = next(u for u in todo if (u[0], exp.bases[u[1]].id) == cell)
    try:
        probe_seconds(exp, unit, data)  # the first unit in a process also pays for lazy imports and caches
        probed = probe_seconds(exp, unit, data)
    except Exception:  # noqa: BLE001 - a plugin's fault: the run reports it in one line; the plan prices without it
        return replace(modelled, where=modelled.where + "; no probe: its unit failed (afr run says why)")
    scale = probed / modelled.per_cell[cell] if modelled.per_cell[cell] > 0 else 1.0
    per_cell = {c: s * scale for c, s in modelled.per_cell.items()}
    where = (
        f"a one-unit probe ({cell[0]} / {cell[1]}: {probed:.2f} CPU-s, run now), the other cells scaled by "
        + modelled.where
    )
    return UnitCosts(where, "CPU", per_cell, sum(per_cell.values()) / len(per_cell))
