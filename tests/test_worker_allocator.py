"""Every process that runs afr's units prepares glibc's allocator once (issue 36): a loky worker
in its initializer, afr's own process when joblib runs the units there (``--jobs 1``); and the
rows are the same as in a process left as it starts (afr_cli/engine/worker_setup.py)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.engine import worker_setup
from afr_cli.engine.runner import RunOptions, _workers, run_experiment
from afr_cli.store import ResultsStore

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator")

CONFIG = {
    "name": "allocator-test",
    "seed": 3,
    "protocol": {"reps": 1, "inner_folds": 3},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 12, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {
            "id": "sat-rf-y",
            "family": "sat-rf-y",
            "params": {"tau": 1.0, "kappa": 1.0},
            "grid": {"eps": [0.0, 0.5], "gamma": [0.0, 0.5]},
        },
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5], "tau": [1, 10]}},
    ],
}

# afr run --jobs 1 in a fresh process whose allocator is left as it starts (worker_setup's
# mallopt call made a no-op); it prints whether the process counts as prepared
LEAVE = """
import sys
from afr_cli.engine import worker_setup
worker_setup._set_thresholds = lambda: False
from afr_cli.cli import main
sys.argv = ["afr", "run", sys.argv[1], "--out", sys.argv[2], "--jobs", "1", "--quiet"]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
print(worker_setup.allocator_prepared())
"""


def _tables(out) -> dict[str, pd.DataFrame]:
    """A store's tables as text, without what is timed (a unit's seconds, a solve's milliseconds)."""
    store = ResultsStore(out)
    grid = store.frame("grid")
    grid["solves"] = grid["solves"].map(lambda log: repr([[*e[:4], *e[5:]] for e in log or []]))
    timed = ["seconds", "forest_seconds", "cpu_seconds", "finished_at"]
    tables = {"results": store.frame("results"), "grid": grid, "units": store.frame("units")}
    return {k: df.drop(columns=timed, errors="ignore").astype(str).reset_index(drop=True) for k, df in tables.items()}


def _prepared_here() -> bool:
    return worker_setup._prepared.get("allocator", False)


@pytest.mark.slow
def test_a_loky_worker_of_a_run_has_its_allocator_prepared_before_its_first_unit():
    """The runner's loky workers start with the thresholds set (the old initializer only
    silenced interrupts: a worker's flag stayed unset)."""
    with _workers(RunOptions(jobs=2)) as workers:
        answers = list(workers.run_unordered(_prepared_here, [(), ()]))
    assert answers == [True, True]


@pytest.mark.slow
def test_an_in_process_run_prepares_afrs_process_and_its_rows_equal_an_unprepared_processs(tmp_path, monkeypatch):
    """afr run --jobs 1 sets the thresholds in afr's own process (here: this one, its flag
    cleared first), and where memory is placed changes no stored cell: the same units in a fresh
    process whose allocator is left as it starts give the same tables."""
    config = tmp_path / "alloc.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    left = subprocess.run(
        [sys.executable, "-c", LEAVE, str(config), str(tmp_path / "leave")], capture_output=True, text=True, check=True
    )
    assert left.stdout.split()[-1] == "False"
    monkeypatch.setattr(worker_setup, "_prepared", {})
    quiet = {"progress": False, "export": False}
    run_experiment(
        load_experiment(config, None, tmp_path / "prepare"), RunOptions(jobs=1, **quiet), echo=lambda *_: None
    )
    assert worker_setup.allocator_prepared()
    unprepared, prepared = _tables(tmp_path / "leave"), _tables(tmp_path / "prepare")
    for table in ("results", "grid", "units"):
        assert len(unprepared[table]) > 0
        pd.testing.assert_frame_equal(unprepared[table], prepared[table], check_exact=True)
