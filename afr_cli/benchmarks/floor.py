"""The shared-work path against today's, on the units of one (dataset, repetition) of a config,
in one run: CPU seconds of each, the ratio, and whether every stored value came out the same.

Today's path computes every unit alone with every speedup off (``shared_work.TODAY``: no solve
memo, each forest fitted at its own size, clean and noisy units apart, scikit-learn's own trees);
the new path computes the same units as the runner does (``unit_groups``: prefix forests, shared
noise, the memo, the fast tree path unless ``--trees sklearn``), after
an untimed warm-up pass of today's path (so cvxpy's compiled problems are warm for both). The
units are every base's at the first axis point's training fraction (all its noise levels), so
the bases of a tree-count study and the noise levels of a split are in it."""

from __future__ import annotations

import time

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.protocol import run_unit
from afr_cli.engine.shared_work import TODAY, SharedWork, Speedups
from afr_cli.engine.tasks import run_task, unit_tasks
from afr_cli.solvers.cvxpy_backend import clear_compiled_cache

SCORES = ("r2", "mae", "rmse", "cv_score")


def largest_move(today: list, new: list) -> tuple[float, bool]:
    """(largest |change| of any score of any results row, whether every stored value but the
    times is identical)."""
    move, identical = 0.0, True
    for a, b in zip(today, new):
        untimed = [[{k: v for k, v in r.items() if k != "seconds"} for r in u.results] for u in (a, b)]
        grids = [[{k: v for k, v in g.items() if k != "solves"} for g in u.grid] for u in (a, b)]
        identical &= repr(untimed[0]) == repr(untimed[1]) and repr(grids[0]) == repr(grids[1])
        for ra, rb in zip(a.results, b.results):
            for key in SCORES:
                x, y = ra[key], rb[key]
                if x is not None and y is not None and x == x and y == y:
                    move = max(move, abs(x - y))
    return move, identical


def run(
    config: str, dataset: str, rep: int = 0, overrides: list[str] | None = None, speedups: Speedups = Speedups()
) -> dict:
    """Today's path and the shared-work path (``speedups``: every one on, unless the caller chose
    scikit-learn's own trees) on the same units, timed back to back in this process."""
    exp = load_experiment(config, list(overrides or []))
    X, y = load_one(exp, dataset)
    first = exp.protocol.axes()[0][0]
    todo = [(dataset, b, a, rep) for b in range(len(exp.bases)) for a in exp.protocol.axes() if a[0] == first]

    def today_path() -> list:
        return [
            run_unit(
                exp, d, exp.bases[b], r, X, y, a[0] if exp.protocol.train_fractions else None, a[1], SharedWork(TODAY)
            )
            for d, b, a, r in todo
        ]

    # A warm-up pass, untimed: the first solve of a cvxpy fallback in a process compiles its problem,
    # and that first solve's answer can differ from later ones in the last bits (and it costs a
    # compile once per process, not per unit); both timed paths then start from the same state.
    clear_compiled_cache()
    today_path()
    c0, w0 = time.process_time(), time.perf_counter()
    today = today_path()
    today_cpu, today_wall = time.process_time() - c0, time.perf_counter() - w0
    tasks = unit_tasks(exp, todo, speedups)
    c0, w0 = time.process_time(), time.perf_counter()
    new = [unit for task in tasks for unit in run_task(exp, task, X, y, speedups)]
    new_cpu, new_wall = time.process_time() - c0, time.perf_counter() - w0
    order = {(u.base, tuple(sorted(u.axes.items()))): i for i, u in enumerate(today)}
    new.sort(key=lambda u: order[(u.base, tuple(sorted(u.axes.items())))])
    move, identical = largest_move(today, new)
    return {
        "config": config,
        "dataset": dataset,
        "rep": rep,
        "units": len(todo),
        "tasks": len(tasks),
        "trees": speedups.tree_path,
        "today": {"cpu_s": round(today_cpu, 3), "wall_s": round(today_wall, 3)},
        "new": {"cpu_s": round(new_cpu, 3), "wall_s": round(new_wall, 3)},
        "ratio": round(today_cpu / max(new_cpu, 1e-9), 3),
        "largest_move": move,
        "identical": identical,
    }
