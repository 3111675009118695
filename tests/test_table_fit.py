"""``afr table`` on a store of many models: every md line fits TABLE_WIDTH (the columns cut into
blocks, each under the dataset column), datasets in the config's order, and a warning line on
stderr where the trees barely split (the leaf bound from the stored base and training rows) or
where models tie exactly."""

from __future__ import annotations

import os
from pathlib import Path

from afr_forkserver import Invocation, run_afr_forked

from afr_cli.commands.table import TABLE_WIDTH
from afr_cli.tables.store_notes import config_datasets, leaf_bound, ties

MODELS = ("rf", "softmax", "eps-abrf", "sat-rf-y", "em-w-larf", "w-arf", "eps-w-arf")
# the config's order, neither alphabetical nor the registry's
DATASETS = (("zeta", 24), ("Friedman1", 80), ("alpha", 80))


def _store(directory: Path) -> None:
    """A store of MODELS on DATASETS, 3 repetitions: 'zeta' has 24 training rows under
    min_samples_leaf 10 (two leaves per tree at most) and five models tied exactly on it."""
    from afr_cli.store import ResultsStore, UnitRecord

    config = {
        "name": "wide",
        "datasets": [
            {"name": "zeta", "file": "z.csv", "target": "y"},
            "friedman 1",
            {"name": "alpha", "file": "a.csv", "target": "y"},
        ],
        "bases": [{"kind": "rf", "n_estimators": 20, "min_samples_leaf": 10}],
    }
    store = ResultsStore(directory)
    store.create({"experiment": "wide", "config_hash": "x", "config": config})
    for d, (dataset, n_train) in enumerate(DATASETS):
        for rep in range(3):
            rows = []
            for m, model in enumerate(MODELS):
                tied = dataset == "zeta" and 0 < m < 6
                r2 = -0.2 + rep / 100 if tied else 0.3 + m / 50 + d / 10 + rep / 100
                rows.append(
                    {
                        "model": model,
                        "r2": r2,
                        "mae": 1.0,
                        "rmse": 1.0,
                        "params": {"tau": [0.1, 1.0, 10.0][(rep + m) % 3], "eps": [0.0, 0.5][rep % 2]} if m else {},
                        "selection": "inner-cv",
                        "cv_score": 0.4,
                        "solver_status": {},
                        "seconds": 0.1,
                    }
                )
            store.write_unit(UnitRecord(dataset, "RF@20", rep, rep, n_train, 6, 0.1, 0.2, rows, []))


def test_leaf_bound_from_the_tree_parameters():
    assert leaf_bound({"min_samples_leaf": 10}, 24) == 2
    assert leaf_bound({"min_samples_leaf": 0.25}, 40) == 4
    assert leaf_bound({"min_samples_leaf": 1, "max_depth": 1}, 500) == 2
    assert leaf_bound({"max_leaf_nodes": 3, "min_samples_leaf": 1}, 500) == 3
    assert leaf_bound({"n_estimators": 100}, 500) == float("inf")


def test_config_order_of_names_and_mappings():
    assert config_datasets({"datasets": ["friedman 1", {"name": "mine"}, "Yacht"]}) == ["Friedman1", "mine", "Yacht"]


def test_ties_need_three_models_alike_on_every_repetition():
    import pandas as pd

    frame = pd.DataFrame(
        {
            "dataset": ["d"] * 8,
            "base": ["B"] * 8,
            "rep": [0, 1] * 4,
            "model": ["a", "a", "b", "b", "c", "c", "e", "e"],
            "r2": [0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1, 0.3],
        }
    )
    (line,) = ties(frame)
    assert "3 models score exactly alike on every repetition (a, b, c)" in line
    assert ties(frame[frame["model"] != "c"]) == []


def test_a_table_of_seven_models_fits_and_keeps_the_config_order(tmp_path):
    _store(tmp_path / "s")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    plain, std = run_afr_forked(
        [
            Invocation(("table", "--results", "s"), tmp_path, env),
            Invocation(("table", "--results", "s", "--std"), tmp_path, env),
        ]
    )
    for proc in (plain, std):
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert max(len(line) for line in lines) <= TABLE_WIDTH, proc.stdout
        header_cells = [c.strip() for line in lines if line.startswith("| dataset") for c in line.split("|")[2:-1]]
        assert sorted(c for c in header_cells if c in MODELS) == sorted(MODELS)  # each model once
        assert sum(line.startswith("| dataset") for line in lines) >= 2  # cut into blocks
        first_rows = [line.split("|")[1].strip() for line in lines if line.startswith("| ") and "dataset" not in line]
        assert first_rows[:3] == ["zeta", "Friedman1", "alpha"]
        warnings = proc.stderr.strip().splitlines()
        assert warnings == [
            "warning: zeta / RF@20: the trees barely split: at most 2 leaves per tree (24 training rows, "
            "min_samples_leaf 10); the attention models have almost nothing to weigh",
            "warning: zeta / RF@20: 5 models score exactly alike on every repetition (softmax, eps-abrf, "
            "sat-rf-y, em-w-larf, w-arf): their differences are not measured here",
        ], proc.stderr
