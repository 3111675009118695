"""Every solve of a unit is logged in its grid row (stage, solver, status, objective, ms) and the
store keeps it; a fallback names the attempts that failed."""

from __future__ import annotations

import numpy as np
import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.data import load_dataset
from afr_cli.engine.protocol import REFIT, run_unit, solve_entry
from afr_cli.solvers.solve import SolveResult
from afr_cli.store import ResultsStore


def test_grid_rows_log_each_stage_solve_and_the_store_keeps_them(tmp_path):
    cfg = {
        "name": "log",
        "protocol": {"reps": 1, "inner_folds": 2},
        "datasets": ["Friedman1"],
        "bases": [{"kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
        "models": [
            {"id": "abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5]}},
            {"id": "abrf-l1", "family": "eps-abrf", "loss": "l1", "params": {"eps": 0.5}},
        ],
    }
    path = tmp_path / "log.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp = load_experiment(path, results_dir=tmp_path / "store")
    X, y = load_dataset("Friedman1")
    unit = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y)
    store = ResultsStore(exp.results)
    store.create({"config_hash": exp.unit_hash()})
    store.write_unit(unit)
    grid = store.frame("grid").set_index("model")
    assert grid.loc["abrf"].iloc[0]["solves"] == []  # eps = 0: nothing to train, nothing solved
    trained = grid.loc["abrf"].iloc[1]["solves"]
    assert [s[0] for s in trained] == [0, 1, REFIT] and {s[1] for s in trained} == {"DAQP"}
    for _stage, _solver, status, objective, ms in trained:
        assert status == "optimal" and np.isfinite(objective) and objective > 0 and ms >= 0
    l1 = grid.loc[["abrf-l1"]].iloc[0]["solves"]
    assert [(s[0], s[1]) for s in l1] == [(0, "HIGHS"), (1, "HIGHS"), (REFIT, "HIGHS")]


def test_a_fallback_entry_names_the_failed_attempts():
    result = SolveResult(
        np.ones(2) / 2,
        "CLARABEL",
        "optimal",
        1.5,
        0.002,
        [
            {"solver": "DAQP", "status": "infeasible", "seconds": 0.001},
            {"solver": "PIQP", "status": "max_iter_reached", "seconds": 0.001},
            {"solver": "CLARABEL", "status": "optimal", "seconds": 0.001},
        ],
    )
    assert solve_entry(REFIT, result) == [
        REFIT,
        "CLARABEL",
        "optimal",
        1.5,
        2.0,
        "DAQP: infeasible; PIQP: max_iter_reached",
    ]


def test_a_store_made_before_solve_logs_gains_the_column(tmp_path):
    import sqlite3

    store = ResultsStore(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    with sqlite3.connect(store.path) as conn:  # the grid table as it was
        conn.execute(
            "CREATE TABLE grid (dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, "
            "rep INTEGER NOT NULL, point TEXT NOT NULL, cv_r2 REAL, cv_mae REAL, test_r2 REAL, "
            "test_mae REAL, test_rmse REAL, PRIMARY KEY (dataset, base, model, rep, point))"
        )
        conn.execute("INSERT INTO grid VALUES ('D', 'RF', 'm', 0, '{}', 0.1, 0.2, 0.3, 0.4, 0.5)")
    store.create({"config_hash": "x"})
    grid = store.frame("grid")
    assert "solves" in grid and grid["solves"].iloc[0] is None
