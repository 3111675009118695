"""Which rows a table sees: the first N repetitions, and the one definition of best-test.

best-test: per (dataset, base, model [, unit axes]) the one grid point with the best mean
*test* score over the repetitions in view (after ``--reps`` truncation), and that point's
test metrics in every one of those repetitions. It is how the papers' single "optimal" value
per dataset reads, and the optimistic counterpart of inner-CV selection. `afr table
--selection best-test`, `afr report`'s ``-best-test`` files and stores run with the protocol's
``selection: best-test`` (which only skips the inner CV) all go through ``best_test_results``.
"""

from __future__ import annotations

import pandas as pd

from afr_cli.catalogue.knowledge import unit_axes

BEST_TEST = "best-test"
BEST_TEST_NOTE = (
    "selection: best-test (optimistic; per dataset, base and model the grid point with the "
    "best mean test score over the repetitions shown)"
)
BEST_TEST_COLUMNS = ["dataset", "base", "model", "rep", "r2", "mae", "rmse", "params", "selection"]


def first_reps(frame: pd.DataFrame, reps: int | None) -> pd.DataFrame:
    """Only repetitions 0..reps-1 (None: all), so stores being extended report a fixed count."""
    return frame if reps is None else frame[frame["rep"] < reps]


def _axes(frame: pd.DataFrame) -> list[str]:
    return [a for a in unit_axes() if a in frame.columns]


def best_test_results(grid: pd.DataFrame, select_by: str = "r2") -> pd.DataFrame:
    """Results re-selected on the test set from the stored grid scores (module docstring); the
    rows are labelled ``selection = best-test``. Models without grid rows (``best_of``
    composites) are dropped: choosing among them on the test set is the same thing again."""
    axes = _axes(grid)
    if grid.empty:
        return pd.DataFrame(columns=BEST_TEST_COLUMNS + axes)
    grid = grid.assign(point_key=grid["point"].map(lambda p: tuple(sorted(p.items()))))
    keys = ["dataset", "base", "model", *axes]
    score = f"test_{select_by}"
    means = grid.groupby(keys + ["point_key"])[score].mean().reset_index()
    ascending = select_by != "r2"
    best = means.sort_values(keys + [score], ascending=[True] * len(keys) + [ascending], kind="stable")
    best = best.groupby(keys, as_index=False).first()[keys + ["point_key"]]
    chosen = grid.merge(best, on=keys + ["point_key"])
    out = pd.DataFrame(
        {
            "dataset": chosen["dataset"],
            "base": chosen["base"],
            "model": chosen["model"],
            "rep": chosen["rep"],
            "r2": chosen["test_r2"],
            "mae": chosen["test_mae"],
            "rmse": chosen["test_rmse"],
            "params": chosen["point"],
            "selection": BEST_TEST,
        }
    )
    for axis in axes:
        out[axis] = chosen[axis]
    return out


def results_in_view(
    results: pd.DataFrame,
    grid: pd.DataFrame | None,
    selection: str = "stored",
    reps: int | None = None,
    select_by: str = "r2",
) -> pd.DataFrame:
    """The rows a table shows: repetitions 0..reps-1; with ``selection == "best-test"`` every
    model re-selected by ``best_test_results`` on those repetitions. Rows a run stored under
    the protocol's ``selection: best-test`` are re-selected the same way, so best-test has one
    meaning whichever way it was asked for. ``select_by``: the metric the store's experiment
    selects by (its protocol.select_by), which best-test then uses too."""
    results = first_reps(results, reps)
    if grid is None:
        return results
    grid = first_reps(grid, reps)
    if selection == BEST_TEST:
        return best_test_results(grid, select_by)
    stored_best = results["selection"] == BEST_TEST
    if not stored_best.any():
        return results
    keys = ["dataset", "base", "model"]
    wanted = results.loc[stored_best, keys].drop_duplicates()
    reselected = best_test_results(grid.merge(wanted, on=keys), select_by)
    return pd.concat([results[~stored_best], reselected], ignore_index=True)


def selection_note(results: pd.DataFrame) -> str | None:
    """The best-test warning when any result's grid point was chosen on the test set."""
    best_test = results[results["selection"] == BEST_TEST]
    if best_test.empty:
        return None
    if len(best_test) == len(results):
        return BEST_TEST_NOTE
    models = sorted({f"{m} ({b})" for b, m in zip(best_test["base"], best_test["model"])})
    return f"{BEST_TEST_NOTE}: {', '.join(models)}"
