"""``afr diff``: per-cell changes between two stores of one experiment."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.store.diff import diff_stores, render_diff

CONFIG = {
    "name": "diff-test",
    "seed": 5,
    "protocol": {"reps": 2, "inner_folds": 2},
    "datasets": ["Friedman1", "Sparse"],
    "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5, 1.0], "tau": [1.0]}},
    ],
}


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The same experiment solved by ECOS and by the default fast path, 2 and 3 repetitions."""
    path = tmp_path_factory.mktemp("cfg") / "diff.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    out = {}
    for solver, reps in (("ECOS", 2), ("auto", 3)):
        out[solver] = tmp_path_factory.mktemp(solver)
        exp = load_experiment(path, [f"models.1.solver={solver}", f"protocol.reps={reps}"], out[solver])
        run_experiment(exp, RunOptions(jobs=1, progress=False), echo=lambda *_: None)
    return out


def test_two_solvers_agree_to_solver_tolerance_on_the_common_units(stores):
    d = diff_stores(stores["ECOS"], stores["auto"])
    assert (d.common_units, d.only_old, d.only_new) == (4, 0, 2)
    assert len(d.cells) == 4 and (d.cells["reps"] == 2).all()
    assert d.cells["max_abs"].max() < 1e-4
    assert d.cells.loc[d.cells.model == "rf", "max_abs"].eq(0).all()  # no solver, same forest


def test_a_moved_score_is_the_first_cell_with_its_exact_change(stores, tmp_path):
    shutil.copytree(stores["ECOS"], tmp_path / "moved")
    with sqlite3.connect(tmp_path / "moved" / "store.sqlite") as conn:
        conn.execute(
            'UPDATE results SET r2 = r2 + 0.25, params = \'{"eps": 0.75, "tau": 1.0}\' '
            "WHERE dataset = 'Sparse' AND model = 'eps-abrf' AND rep = 1"
        )
    d = diff_stores(stores["ECOS"], tmp_path / "moved")
    first = d.cells.iloc[0]
    assert (first.dataset, first.model, first.params_changed) == ("Sparse", "eps-abrf", 1)
    assert first.max_abs == pytest.approx(0.25, abs=1e-12) and first["mean"] == pytest.approx(0.125, abs=1e-12)
    assert d.cells.iloc[1:]["max_abs"].eq(0).all()
    text = render_diff(d, threshold=1e-4)
    assert "largest |Δr2| 0.25 (Sparse / RF@8 / eps-abrf); 1 cell(s) above 0.0001" in text.splitlines()[0]


def test_cli_prints_the_table_and_refuses_bad_input(stores, tmp_path):
    proc = run_afr("diff", str(stores["ECOS"]), str(stores["auto"]), "--metric", "mae", "--top", "2")
    assert proc.returncode == 0, proc.stderr
    assert "|Δmae|" in proc.stdout and len([line for line in proc.stdout.splitlines() if line.startswith("| ")]) == 3
    assert_one_line_error(
        run_afr("diff", str(stores["ECOS"]), str(stores["auto"]), "--metric", "auc"),
        "--metric",
        "allowed: r2, mae, rmse",
    )
    assert_one_line_error(run_afr("diff", str(stores["ECOS"]), str(tmp_path)), str(tmp_path), "no results store")
