"""``afr reproduce --plan`` on an experiment with nothing stored anywhere projects its cost from a
cost model fitted on the committed stores, scaled by one unit computed now (a probe), and says
so; never "0.0 CPU-min ... nothing measured"."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from conftest import run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import missing_units
from afr_cli.reproduction.plan_costs import CostModel, _fit, estimated_costs, modelled_costs

CONFIG = {
    "name": "own-plan",
    "seed": 1,
    "protocol": {"reps": 3, "inner_folds": 2},
    "datasets": ["Friedman1", "Sparse"],
    "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0], "tau": [1, 10]}},
    ],
}


def _config(tmp_path) -> str:
    path = tmp_path / "own.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return str(path)


def test_the_fit_recovers_a_power_law_in_rows_per_tree():
    rows = np.array([100.0, 200.0, 400.0, 800.0, 1600.0])
    a, b = _fit(rows, np.exp(-9.0) * rows**1.5)
    assert (a, b) == (pytest.approx(-9.0), pytest.approx(1.5))
    a, b = _fit(np.array([300.0, 300.0]), np.array([0.03, 0.05]))  # one size of data: cost in proportion to rows
    assert b == 1.0 and math.exp(a) * 300 == pytest.approx(0.04, rel=0.05)


def test_a_probe_scales_the_models_cells_and_the_label_says_which(tmp_path):
    model = CostModel({"forest": (math.log(1e-5), 1.0), "eps-abrf": (math.log(2e-5), 1.0)}, (math.log(1e-4), 0.5), 7)
    exp = load_experiment(_config(tmp_path), [], tmp_path / "store")
    _, todo = missing_units(exp, None)
    rows = {"Friedman1": 80, "Sparse": 80}
    modelled = modelled_costs(exp, rows, model)
    assert set(modelled.per_cell) == {("Friedman1", "RF@8"), ("Sparse", "RF@8")}
    # per cell: outside + forest (1 point) + eps-abrf (4 points), each at 8 trees
    expected = 1e-4 * 80**0.5 * 8 + 1e-5 * 80 * 8 + 4 * 2e-5 * 80 * 8
    assert modelled.per_cell[("Sparse", "RF@8")] == pytest.approx(expected)
    estimated = estimated_costs(exp, todo, model)
    assert estimated.measured_in == "CPU" and estimated.where.startswith("a one-unit probe (")
    assert "the other cells scaled by the cost model fitted on 7 committed units" in estimated.where
    ratio = estimated.per_cell[("Sparse", "RF@8")] / modelled.per_cell[("Sparse", "RF@8")]
    assert ratio > 0 and estimated.overall == pytest.approx(ratio * modelled.overall)
    unknown = modelled_costs(
        load_experiment(
            _config(tmp_path), ["models.1.family=w-arf", "models.1.grid={eps: [0.0, 1.0]}"], tmp_path / "s2"
        ),
        rows,
        model,
    )
    assert unknown.where.endswith("w-arf never measured, priced as eps-abrf")


@pytest.mark.slow
def test_a_plan_of_an_experiment_nothing_measured_projects_a_cost_from_the_probe(tmp_path):
    config, root = _config(tmp_path), tmp_path / "root"
    proc = run_afr("reproduce", config, "--plan", "--reps", "2", "--root", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "0.0 CPU-min" not in proc.stdout and "nothing measured" not in proc.stdout
    assert "one-unit probe" in proc.stdout and "cost model fitted on" in proc.stdout
    # the next step is the same command without --plan, every other option as given
    assert proc.stdout.strip().splitlines()[-1] == f"to run it: afr reproduce {config} --reps 2 --root {root}"
    assert not root.exists()  # the probe stores nothing
