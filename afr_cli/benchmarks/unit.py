"""One protocol unit under two solvers, back to back in this process: CPU seconds of each, the
ratio, and how far the units' R^2 move (between the two, and against a store's own rows for the
same unit). Used to judge a solver change before a store is regenerated, and to extrapolate an
experiment's compute from its store."""

from __future__ import annotations

import time

from afr_cli.config.experiment import Experiment, load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.protocol import run_unit
from afr_cli.solvers.cvxpy_backend import clear_compiled_cache
from afr_cli.store import ResultsStore


def _unit(exp: Experiment, dataset: str, rep: int, X, y) -> tuple[dict, float, float]:
    """({(base, model): r2}, CPU seconds, wall seconds) of every base's unit."""
    r2, cpu, wall = {}, 0.0, 0.0
    for base in exp.bases:
        clear_compiled_cache()
        c0, w0 = time.process_time(), time.perf_counter()
        unit = run_unit(exp, dataset, base, rep, X, y)
        cpu, wall = cpu + time.process_time() - c0, wall + time.perf_counter() - w0
        r2.update({(base.id, r["model"]): r["r2"] for r in unit.results})
    return r2, cpu, wall


def _largest(a: dict, b: dict) -> float | None:
    diffs = [abs(a[k] - b[k]) for k in a if k in b and a[k] is not None and b[k] is not None]
    return max(diffs) if diffs else None


def run(
    config: str,
    dataset: str,
    against: str,
    rep: int = 0,
    overrides: list[str] | None = None,
    store_dir: str | None = None,
    reps: int | None = None,
) -> dict:
    """AUTO against ``against`` on one unit; with a store, its rows and its extrapolated compute."""
    out: dict = {"config": config, "dataset": dataset, "rep": rep, "solvers": {}}
    r2s = {}
    for solver in ("AUTO", against.upper()):
        exp = load_experiment(config, [*(overrides or []), ("solver", solver)])
        X, y = load_one(exp, dataset)
        r2s[solver], cpu, wall = _unit(exp, dataset, rep, X, y)
        out["solvers"][solver] = {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
    old = against.upper()
    out["ratio"] = out["solvers"][old]["cpu_s"] / max(out["solvers"]["AUTO"]["cpu_s"], 1e-9)
    out["max_abs_dr2_between"] = _largest(r2s["AUTO"], r2s[old])
    if store_dir:
        out.update(
            _against_store(ResultsStore(store_dir), dataset, rep, r2s["AUTO"], out["solvers"]["AUTO"]["cpu_s"], reps)
        )
    return out


def _against_store(
    store: ResultsStore, dataset: str, rep: int, auto_r2: dict, auto_cpu: float, reps: int | None
) -> dict:
    """|dR2| per model against the store's rows of this unit; the store's compute scaled to
    ``reps`` repetitions and by AUTO's CPU over the store's seconds for this unit."""
    results, units = store.frame("results"), store.frame("units")
    mine = results[(results.dataset == dataset) & (results.rep == rep)]
    stored = {(r.base, r.model): r.r2 for r in mine.itertuples()}
    per_model: dict[str, float] = {}
    for (base, model), v in auto_r2.items():
        if (base, model) in stored and v is not None and stored[(base, model)] is not None:
            per_model[model] = max(per_model.get(model, 0.0), abs(v - stored[(base, model)]))
    unit_s = float(units[(units.dataset == dataset) & (units.rep == rep)].seconds.sum())
    scale = (reps or int(units.rep.max()) + 1) / (int(units.rep.max()) + 1)
    total_s = float(units.seconds.sum()) * scale
    return {
        "max_abs_dr2_vs_store": per_model,
        "store_unit_s": round(unit_s, 3),
        "store_total_min": round(total_s / 60, 1),
        "reps": reps or int(units.rep.max()) + 1,
        "extrapolated_auto_cpu_min": round(total_s * auto_cpu / unit_s / 60, 3) if unit_s else None,
    }
