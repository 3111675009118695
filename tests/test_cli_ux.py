"""What the CLI tells a user: --version, a complete experiment, --compare without --results,
--reps beyond the stored count, a run's progress and ETA, estimator solver names."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
import yaml
from conftest import run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.errors import AfrInputError

TINY = {
    "name": "ux-tiny",
    "seed": 3,
    "protocol": {"reps": 2, "inner_folds": 2},
    "datasets": ["Friedman1", "Sparse"],
    "bases": [{"kind": "rf", "n_estimators": 4, "min_samples_leaf": 5}],
    "models": [{"id": "rf", "family": "forest"}],
}


def test_version_names_the_package_version_and_the_git_commit(monkeypatch):
    import afr_cli
    from afr_cli.core import version

    proc = run_afr("--version")
    assert proc.returncode == 0 and proc.stderr == ""
    assert re.fullmatch(rf"afr {re.escape(afr_cli.__version__)} \(git [0-9a-f]{{12}}(, modified)?\)\n", proc.stdout)
    answers = {"rev-parse": "0123456789ab", "status": " M afr_cli/cli.py"}
    monkeypatch.setattr(version, "git_output", lambda *args: answers[args[0]])
    assert version.version_line() == f"afr {afr_cli.__version__} (git 0123456789ab, modified)"
    answers["status"] = ""
    assert version.version_line() == f"afr {afr_cli.__version__} (git 0123456789ab)"
    monkeypatch.setattr(version, "git_output", lambda *args: None)
    assert version.version_line() == f"afr {afr_cli.__version__} (not a git checkout)"


def test_estimators_reject_an_unknown_solver_or_loss_at_fit_as_a_config_does(tmp_path, small_data):
    from afr_cli.models import LARF, SATRF, EpsABRF
    from afr_cli.solvers.solve import SOLVERS

    X, y, _, _ = small_data
    config = dict(TINY, models=[{"id": "a", "family": "eps-abrf", "solver": "GUROBIX"}])
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(AfrInputError) as from_config:
        load_experiment(tmp_path / "c.yaml")
    for estimator in (EpsABRF(solver="GUROBIX"), SATRF(solver="GUROBIX"), LARF(solver="GUROBIX")):
        with pytest.raises(ValueError) as err:
            estimator.fit(X, y)
        assert isinstance(err.value, AfrInputError)
        name = type(estimator).__name__
        assert str(err.value) == f"{name}.solver: 'GUROBIX' is not allowed; allowed: {', '.join(SOLVERS)}"
        assert str(from_config.value).endswith(str(err.value).split(": ", 1)[1])  # the config's wording
        assert not hasattr(estimator, "forest_")  # refused before any fitting
    with pytest.raises(ValueError, match=r"EpsABRF.loss: 'l3' is not allowed; allowed: l2, l1"):
        EpsABRF(loss="l3").fit(X, y)
    fitted = EpsABRF(solver=SOLVERS[1].lower(), n_estimators=5, random_state=0).fit(X, y)
    assert fitted.solve_result_.solver == SOLVERS[1]  # names match case-insensitively, as in configs


def _run_tiny(tmp_path, reps: int, out, datasets: list[str] | None = None) -> list[str]:
    from afr_cli.engine.runner import RunOptions, run_experiment

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    sets = [f"protocol.reps={reps}"] + ([f"datasets={datasets}"] if datasets else [])
    exp = load_experiment(config, sets, out)
    lines: list[str] = []
    run_experiment(
        exp,
        # the command as afr run's given_command rebuilds it from `afr run tiny.yaml --reps N --out DIR`
        RunOptions(jobs=1, progress=False, command=["afr", "run", str(config), "--reps", str(reps), "--out", str(out)]),
        echo=lambda text: lines.extend(str(text).splitlines()),
    )
    return lines


def test_a_complete_experiment_says_so_with_its_table_and_how_to_extend_or_move_it(tmp_path):
    out = tmp_path / "store"
    _run_tiny(tmp_path, 2, out)
    lines = _run_tiny(tmp_path, 2, out)
    assert "0 to run" in lines[0]
    assert lines[1] == (
        f"ux-tiny: complete, nothing to run; the store holds 2 repetitions on every dataset and "
        f"base (2 datasets x 1 bases) in {out}"
    )
    assert lines[2].split(":", 1)[1].strip() == f"afr table --results {out}"
    # the user's --reps is changed where it stands, never repeated; the new store replaces --out
    assert f"afr run {tmp_path / 'tiny.yaml'} --reps 4 --out {out}  (computes" in lines[3]
    assert lines[4].endswith(f"afr run {tmp_path / 'tiny.yaml'} --reps 2 --out DIR")
    # a store extended unevenly: each (dataset, base)'s count
    _run_tiny(tmp_path, 3, out, ["Sparse"])
    lines = _run_tiny(tmp_path, 2, out)
    assert "repetitions per dataset and base: Friedman1/RF@4 2, Sparse/RF@4 3" in lines[1]


def _store_with(directory, models_by_base: dict[str, list[str]], reps: int = 2) -> None:
    from afr_cli.store import ResultsStore, UnitRecord

    store = ResultsStore(directory)
    store.create({"experiment": directory.name})
    for base, models in models_by_base.items():
        for rep in range(reps):
            rows = [
                {
                    "model": m,
                    "r2": 0.5 + 0.01 * i + 0.001 * rep + 0.002 * d,
                    "mae": 1.0,
                    "rmse": 1.0,
                    "params": {},
                    "selection": "inner-cv",
                    "cv_score": None,
                    "solver_status": {},
                    "seconds": 0.0,
                }
                for i, m in enumerate(models)
                for d in range(1)
            ]
            for d, dataset in enumerate(("Diabetes", "Wine", "Yacht")):
                shifted = [dict(r, r2=r["r2"] + 0.003 * d * (r["model"] == models[-1])) for r in rows]
                store.write_unit(UnitRecord(dataset, base, rep, rep, 10, 5, 0.0, 1.0, shifted, []))


@pytest.mark.slow
def test_compare_without_results_uses_the_stores_holding_both_models(tmp_path):
    root = tmp_path / "results"
    _store_with(root / "both_rf", {"RF": ["rf", "a", "b"]})
    _store_with(root / "both_ert", {"ERT": ["ert", "a", "b"]})
    _store_with(root / "only_a", {"RF": ["a", "c"]})
    _store_with(root / "only_c", {"ERT": ["c"]})
    proc = run_afr("table", "--compare", "a", "b", "--format", "csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (
        "note: --compare a b: using results/both_ert, results/both_rf (the stores under results/ that hold them)"
    )
    tests = proc.stdout  # the comparison alone: the full table only with --all
    assert [line.split(",")[0] for line in tests.splitlines()[1:]] == ["RF", "ERT"]
    with_all = run_afr("table", "--compare", "a", "b", "--format", "csv", "--all", cwd=tmp_path)
    tests, table = with_all.stdout.split("\n\n")
    assert tests == proc.stdout.rstrip("\n") and table.startswith("dataset,base,model,metric")

    none = run_afr("table", "--compare", "b", "c", cwd=tmp_path)
    assert none.returncode == 2 and "Traceback" not in none.stderr
    assert none.stderr.strip() == (
        "error: --compare b c: no store under results/ holds both; stores holding b: "
        "results/both_ert, results/both_rf; holding c: results/only_a, results/only_c; "
        "name stores with --results DIR"
    )
    twice = run_afr("table", "--compare", "a", "c", cwd=tmp_path)  # only_a holds both; nothing else does
    assert twice.returncode == 0 and "using results/only_a " in twice.stderr


def test_compare_without_results_refuses_two_stores_holding_the_same_model_and_base(tmp_path):
    from afr_cli.store.discover import stores_for_compare

    root = tmp_path / "results"
    _store_with(root / "one", {"RF": ["a", "b"]})
    _store_with(root / "two", {"RF": ["a", "b"]})
    with pytest.raises(AfrInputError, match=r"a on RF is in several stores .*one.*two.*--results"):
        stores_for_compare("a", "b", root)
    import shutil

    shutil.rmtree(root / "two")
    _store_with(root / "ert", {"ERT": ["a"]})  # MODEL:BASE sides: the stores holding either side
    assert stores_for_compare("a:RF", "a:ERT", root) == [root / "ert", root / "one"]
    with pytest.raises(
        AfrInputError,
        match=r"no store under .* holds each side; stores holding a:ERT: .*ert; "
        r"holding b:ERT: none",
    ):
        stores_for_compare("a:ERT", "b:ERT", root)


@pytest.mark.slow
def test_reps_beyond_the_stored_count_is_said(tmp_path):
    from afr_cli.publish.frames import reps_shortfall

    _store_with(tmp_path / "s", {"RF": ["rf", "a", "b"]}, reps=3)
    proc = run_afr("table", "--results", str(tmp_path / "s"), "--reps", "50", "--compare", "a", "b")
    assert proc.returncode == 0, proc.stderr
    assert "note: --reps 50: only 3 repetitions are stored in the results; those are used" in proc.stderr
    assert "note" not in run_afr("table", "--results", str(tmp_path / "s"), "--reps", "3").stderr
    uneven = pd.DataFrame(
        {"dataset": ["D"] * 5, "base": ["RF"] * 5, "model": ["a", "a", "a", "b", "b"], "rep": [0, 1, 2, 0, 1]}
    )
    assert (
        reps_shortfall(uneven, 3, "x")
        == "--reps 3: 1 of 2 (dataset, base, model) hold fewer: b (RF) 2 in x; those are used"
    )
    assert reps_shortfall(uneven, 2, "x") == reps_shortfall(uneven, None, "x") == ""


def test_status_shows_a_runs_target_progress_and_eta(tmp_path):
    import platform

    from afr_cli.store import ResultsStore
    from afr_cli.store.status import render_status, run_progress, store_status

    _store_with(tmp_path, {"RF": ["rf"]}, reps=2)  # 6 units of 24: 3 datasets x 1 base x 8 reps
    started = datetime.now(UTC) - timedelta(minutes=3)
    target = {
        "datasets": ["Diabetes", "Wine", "Yacht"],
        "bases": ["RF"],
        "reps": 8,
        "units": 24,
        "host": platform.node(),
        "pid": os.getpid(),
        "workers": 2,
    }
    store = ResultsStore(tmp_path)
    store.create({"runs": [{"started_at": started.isoformat(timespec="seconds"), "reps": 8, "target": target}]})
    units = store.frame("units")
    now = started + timedelta(minutes=6)  # 6 units in 6 minutes: 18 more take 18 minutes
    line = run_progress(store.manifest(), units, now)
    assert f"2 workers, running, pid {os.getpid()}): 6 of 24 units (25 %)" in line
    assert "ETA 18.0 min remaining, at this run's rate (6 units in 6.0 min)" in line
    assert "running, pid" in render_status(store_status(tmp_path)).splitlines()[1]
    stopped = dict(target, pid=2**22 + 12345)  # no such process
    store.create({"runs": [{"started_at": started.isoformat(timespec="seconds"), "target": stopped}]})
    line = run_progress(store.manifest(), units, now)
    assert "stopped; re-run the same command to resume" in line and "left to compute if resumed" in line
    # a run that recorded its command (afr run does) names it: the exact line to type
    recorded = dict(stopped, command="afr run mine.yaml --reps 15 --out 'my dir'")
    store.create({"runs": [{"started_at": started.isoformat(timespec="seconds"), "target": recorded}]})
    line = run_progress(store.manifest(), units, now)
    assert "stopped; to resume, run: afr run mine.yaml --reps 15 --out 'my dir'):" in line
    before = (datetime.now(UTC) + timedelta(hours=1)).isoformat()  # no unit of this run yet
    store.create({"runs": [{"started_at": before, "target": target}]})
    assert "ETA 0.1 min remaining, from the mean unit time (1.0 s) over 2 workers" in run_progress(
        store.manifest(), units
    )
    store.create({"runs": [{"started_at": before, "target": dict(target, reps=2, units=6)}]})
    assert run_progress(store.manifest(), units) is None  # target reached


def test_a_missing_optional_dependency_is_a_one_line_error(monkeypatch):
    import sys

    from afr_cli.errors import require

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an environment without it gives
    with pytest.raises(
        AfrInputError,
        match=r"^afr plot needs the Python package 'matplotlib', which is not "
        r"installed: pip install matplotlib$",
    ):
        require("matplotlib", "afr plot")
    assert require("json", "anything").dumps([1]) == "[1]"


def test_the_test_summary_lists_every_skip_with_its_reason(tmp_path):
    """pyproject's addopts (-rsx): a skipped test (e.g. the dataset tests without ../shared) is
    listed with its reason, never silent."""
    import subprocess
    import sys

    from conftest import ROOT

    (tmp_path / "test_probe.py").write_text(
        "import pytest\n\n@pytest.mark.skipif(True, reason='the dataset mirror is absent')\n"
        "def test_needs_mirror():\n    pass\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_probe.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert re.search(r"^SKIPPED \[1\] \S*test_probe.py:3: the dataset mirror is absent$", proc.stdout, re.M), (
        proc.stdout
    )
