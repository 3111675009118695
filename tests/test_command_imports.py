"""Commands import what they compute, so a command pays only for its own work: ``afr --help``
loads no numerical library, ``afr validate`` no solver, plotting, cluster or model library
(scikit-learn, hence no scipy.stats), ``afr status`` no SciPy, ``afr table`` without --compare
none of the tests (afr_cli.analysis.stats, the Bayesian tests, tables/compare), not the model
families (scikit-learn, cvxpy) and not joblib, and ``afr table --compare`` no scipy.stats;
each checked in a fresh interpreter, since a test process has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from afr_cli.store import ResultsStore, UnitRecord
from afr_cli.store.export import STORE_FILE, export_store

pytestmark = pytest.mark.slow

TESTS = ("afr_cli.analysis.stats", "afr_cli.analysis.bayesian", "afr_cli.tables.compare")
ROOT = Path(__file__).resolve().parents[1]
# What no command needs before it computes: `afr --help` (and every other help) loads none of them.
NUMERICAL = ("numpy", "pandas", "sklearn", "scipy", "cvxpy", "matplotlib", "dask")
PROBE = """
import contextlib, io, json, sys
sys.argv = ["afr", *json.loads(sys.argv[1])]
from afr_cli.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        code = main()
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code or 0, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("imports") / "store"
    store = ResultsStore(directory)
    store.create({"experiment": "imports", "config_hash": "h", "runs": [{"reps": 2}]})
    for rep in range(2):
        results = [
            {
                "model": m,
                "r2": 0.5 + 0.1 * i + 0.01 * rep,
                "mae": 1.0,
                "rmse": 2.0,
                "params": {},
                "selection": "inner-cv",
                "cv_score": 0.4,
                "solver_status": {},
                "seconds": 0.1,
            }
            for i, m in enumerate(("rf", "eps-abrf"))
        ]
        for dataset in ("Friedman1", "Diabetes"):
            store.write_unit(UnitRecord(dataset, "RF", rep, rep, 30, 10, 0.5, 1.0, results, []))
    export_store(directory)
    (directory / STORE_FILE).unlink()
    return directory


def _modules(tmp_path: Path, *args: str) -> set[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "AFR_EXPORT_CACHE": str(tmp_path / "cache"),
        "HOME": str(tmp_path),
        **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["code"] == 0 and report["out"], (report["code"], proc.stderr)
    return set(report["modules"])


def test_status_loads_no_scipy(tmp_path, export):
    modules = _modules(tmp_path, "status", str(export))
    assert not {m for m in modules if m == "scipy" or m.startswith("scipy.")}
    assert not set(TESTS) & modules


def test_a_table_without_compare_loads_no_test(tmp_path, export):
    assert not set(TESTS) & _modules(tmp_path, "table", "--results", str(export))  # a cold cache
    warm = _modules(tmp_path, "table", "--results", str(export))  # the families' order now cached
    assert not set(TESTS) & warm
    assert "afr_cli.models" not in warm and "scipy.stats" not in warm
    assert "joblib" not in warm  # only a run needs it (afr_cli.core.quiet_interrupt starts loky's tracker)
    assert set(TESTS) <= _modules(tmp_path, "table", "--results", str(export), "--compare", "rf", "eps-abrf")


def test_a_comparison_loads_no_scipy_stats(tmp_path, export):
    # the t-tests, Wilcoxon, ranks and Bayesian tests compute on scipy.special and numpy: importing
    # scipy.stats costs more CPU than pandas, which every --compare would pay
    modules = _modules(tmp_path, "table", "--results", str(export), "--compare", "rf", "eps-abrf")
    assert set(TESTS) <= modules
    assert not {m for m in modules if m == "scipy.stats" or m.startswith("scipy.stats.")}
    assert "joblib" not in modules


def _loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """The ``packages`` of which ``modules`` holds the package or any module of it."""
    return [p for p in packages if any(m == p or m.startswith(p + ".") for m in modules)]


def test_help_loads_no_numerical_library(tmp_path):
    modules = _modules(tmp_path, "--help")
    assert "afr_cli.commands.bench" in modules  # every command was registered, statically
    assert _loaded(modules, NUMERICAL) == []
    assert _loaded(_modules(tmp_path, "bench", "--help"), NUMERICAL) == []


@pytest.mark.parametrize("config, family_module", [("larf_ert", "larf"), ("satrf_rf", "satrf")])
def test_validate_loads_no_solver_plotting_cluster_or_model_library(tmp_path, config, family_module):
    # a config is checked against the families' parameters, but nothing is solved, drawn, sent or
    # fitted: scikit-learn is not imported (importing it imports scipy.stats, sklearn/utils/fixes.py),
    # nor HiGHS's scipy.optimize; SAT-RF's families are built from their module, whose
    # scikit-learn estimator lives in models/regressors.py
    modules = _modules(tmp_path, "validate", str(ROOT / "configs" / f"{config}.yaml"))
    assert "afr_cli.engine.preflight" in modules  # the config was checked
    assert f"afr_cli.models.{family_module}" in modules  # against its families' declarations
    assert _loaded(modules, ("cvxpy", "matplotlib", "dask", "sklearn", "scipy.stats", "scipy.optimize")) == []
