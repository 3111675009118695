"""The experiment engine end to end: worker independence, kill-and-resume, config hash, Dask."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import afr_bin, assert_one_line_error, run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.forest_fit import fit_forest
from afr_cli.engine.protocol import derive_seed, run_unit, split_indices
from afr_cli.store import load_grid, load_results

CONFIG = {
    "name": "engine-test",
    "seed": 11,
    "protocol": {"reps": 4, "inner_folds": 3},
    "datasets": ["Friedman1", "Sparse"],
    "bases": [{"kind": "rf", "n_estimators": 10, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "softmax", "family": "eps-abrf", "params": {"eps": 0.0}, "grid": {"tau": [1, 10]}},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5, 1.0], "tau": [1, 10]}},
        {"id": "best", "best_of": ["softmax", "eps-abrf"]},
    ],
}
KEY = ["dataset", "base", "model", "rep"]


@pytest.fixture(scope="module")
def config_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "engine.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return path


@pytest.fixture(scope="module")
def reference(config_path, tmp_path_factory) -> pd.DataFrame:
    """An uninterrupted single-worker run: the rows every other run must reproduce exactly."""
    out = tmp_path_factory.mktemp("ref")
    proc = run_afr("run", str(config_path), "--jobs", "1", "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    return _rows(out)


def _rows(out: Path) -> pd.DataFrame:
    df = load_results(out)
    df["params"] = df["params"].map(lambda p: tuple(sorted(p.items())))
    cols = KEY + ["r2", "mae", "rmse", "params", "selection", "cv_score"]
    return df[cols].sort_values(KEY).reset_index(drop=True)


@pytest.mark.slow
def test_reference_run_is_complete_and_sensible(reference):
    assert len(reference) == 2 * 4 * 4
    assert not reference.duplicated(KEY).any()
    assert reference.r2.between(-1, 1).all()


@pytest.mark.slow
def test_two_workers_give_identical_results(config_path, reference, tmp_path):
    proc = run_afr("run", str(config_path), "--jobs", "2", "--out", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stderr
    pd.testing.assert_frame_equal(_rows(tmp_path), reference, check_exact=True)


def test_a_unit_runs_blas_on_one_thread_whatever_its_process_allows(monkeypatch):
    """With --jobs 1 a unit runs in afr's own process, where BLAS may use every core; a loky worker
    gets cores / workers threads. Products summed by more threads round differently, so the runner
    pins one thread inside every unit, and the rows cannot depend on the number of workers."""
    from types import SimpleNamespace

    from threadpoolctl import threadpool_info, threadpool_limits

    from afr_cli.engine import runner
    from afr_cli.engine.shared_work import Speedups

    seen = []
    monkeypatch.setattr(
        runner, "run_fused_task", lambda *args: seen.append([pool["num_threads"] for pool in threadpool_info()]) or []
    )
    task = SimpleNamespace(parts=[(0, SimpleNamespace(members=[(0,)]))])
    with threadpool_limits(limits=2):
        runner._run_task([0], [], task, [], Speedups())
    assert seen and seen[0] and set(seen[0]) == {1}  # numpy's BLAS at least, each on one thread


def _units(out: Path) -> int:
    db = out / "store.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*) FROM units").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(config_path, reference, tmp_path):
    proc = subprocess.Popen(
        [afr_bin(), "run", str(config_path), "--jobs", "1", "--out", str(tmp_path), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 300
    while _units(tmp_path) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = _units(tmp_path)
    assert 2 <= done_before < 8, "the kill must land mid-run"
    resumed = run_afr("run", str(config_path), "--jobs", "1", "--out", str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done_before} already stored, {8 - done_before} to run" in resumed.stdout
    pd.testing.assert_frame_equal(_rows(tmp_path), reference, check_exact=True)
    grid = load_grid(tmp_path)
    grid["point"] = grid["point"].map(lambda p: tuple(sorted(p.items())))
    assert not grid.duplicated(KEY + ["point"]).any()
    assert len(grid) == 8 * (1 + 2 + 6)


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie awaiting its reaper does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
def test_ctrl_c_stops_two_workers_quietly_and_the_printed_command_resumes_the_same_run(
    config_path, reference, tmp_path
):
    # 100 repetitions (200 units): enough that the interrupt lands mid-run however fast a unit is.
    # The run gets Ctrl-C's default action even when the suite itself runs in the background (a shell
    # starts a background job with SIGINT ignored, and Python keeps an ignored SIGINT ignored: the
    # run would then rightly go on to the end, as a background `afr run &` does).
    reps, units = 100, 200
    command = [afr_bin(), "run", str(config_path), "--jobs", "2", "--out", str(tmp_path), "--reps", str(reps)]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.time() + 300
    while _units(tmp_path) < 1 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    workers = _children(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    _, stderr = proc.communicate(timeout=120)
    stored = _units(tmp_path)
    assert proc.returncode == 130, stderr
    assert 1 <= stored < units, "the interrupt must land mid-run"
    assert len(workers) >= 2  # the loky workers (and its resource tracker) were running
    for noise in ("Traceback", "KeyboardInterrupt", "Solver interrupted"):
        assert noise not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    # the hint is the command as typed, every option in the order given (--jobs and --reps too)
    hint = f"afr run {config_path} --jobs 2 --out {tmp_path} --reps {reps}"
    said = f"{stored} of {units} units stored; this command resumes with the missing ones: {hint}"
    assert last == f"interrupted: {tmp_path}: {said}"
    deadline = time.time() + 30
    while any(_alive(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "the workers must stop with the run"
    typed = shlex.split(last.split("missing ones: ", 1)[1])  # the hint, followed literally
    assert typed[0] == "afr" and typed[1:] == command[1:]
    resumed = run_afr(*typed[1:], "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{stored} already stored, {units - stored} to run" in resumed.stdout
    rows = _rows(tmp_path)
    assert len(rows) == reps * len(reference) // 4  # the reference holds 4 repetitions
    pd.testing.assert_frame_equal(rows[rows.rep < 4].reset_index(drop=True), reference, check_exact=True)


def test_ctrl_c_during_the_export_of_a_finished_run_neither_stops_nor_half_writes_it(
    config_path, tmp_path, monkeypatch
):
    import afr_cli.engine.runner as runner
    from afr_cli.engine.runner import RunOptions, run_experiment
    from afr_cli.store.export import has_export

    real_export = runner.export_store

    def export_hit_by_ctrl_c(directory):
        os.kill(os.getpid(), signal.SIGINT)  # delivered now: Ctrl-C mid-export
        return real_export(directory)

    monkeypatch.setattr(runner, "export_store", export_hit_by_ctrl_c)
    handler = signal.getsignal(signal.SIGINT)
    exp = load_experiment(config_path, ["protocol.reps=1"], tmp_path)
    run_experiment(exp, RunOptions(jobs=1, progress=False), echo=lambda *_: None)
    assert has_export(tmp_path)
    assert load_results(tmp_path).rep.nunique() == 1
    assert signal.getsignal(signal.SIGINT) is handler  # a library caller gets its Ctrl-C back


@pytest.mark.slow
def test_changed_config_is_refused_unless_fresh(config_path, tmp_path):
    args = ["run", str(config_path), "--jobs", "1", "--out", str(tmp_path), "-q", "--reps", "1", "--datasets", "Sparse"]
    assert run_afr(*args).returncode == 0
    changed = run_afr(*args, "--set", "models.2.grid.tau=[1]")
    assert_one_line_error(changed, "different config", "--fresh")
    assert run_afr(*args, "--set", "models.2.grid.tau=[1]", "--fresh", "--yes").returncode == 0
    assert set(load_results(tmp_path).model) == {"rf", "softmax", "eps-abrf", "best"}


@pytest.mark.slow
def test_more_reps_extend_an_existing_store(config_path, tmp_path):
    base = ["run", str(config_path), "--jobs", "1", "--out", str(tmp_path), "--datasets", "Sparse"]
    assert run_afr(*base, "--reps", "1", "-q").returncode == 0
    more = run_afr(*base, "--reps", "2")
    assert "1 already stored, 1 to run" in more.stdout
    assert sorted(load_results(tmp_path).rep.unique()) == [0, 1]


@pytest.mark.slow
def test_dask_backend_matches_local_run(config_path, reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        proc = run_afr(
            "run",
            str(config_path),
            "--backend",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--out",
            str(tmp_path),
            "-q",
        )
    assert proc.returncode == 0, proc.stderr
    pd.testing.assert_frame_equal(_rows(tmp_path), reference, check_exact=True)


def test_protocol_selection_and_best_of(config_path):
    from afr_cli.data import load_dataset

    exp = load_experiment(config_path)
    X, y = load_dataset("Sparse")
    unit = run_unit(exp, "Sparse", exp.bases[0], 0, X, y)
    rows = {r["model"]: r for r in unit.results}
    grid = [g for g in unit.grid if g["model"] == "eps-abrf"]
    best_cv = max(grid, key=lambda g: g["cv_r2"])
    assert rows["eps-abrf"]["params"] == best_cv["point"]
    assert rows["eps-abrf"]["r2"] == best_cv["test_r2"]
    part = max(("softmax", "eps-abrf"), key=lambda m: rows[m]["cv_score"])
    assert rows["best"]["params"]["component"] == part and rows["best"]["r2"] == rows[part]["r2"]
    # eps = 0 points of eps-abrf are the Softmax model: identical test scores
    soft = {g["point"]["tau"]: g["test_r2"] for g in unit.grid if g["model"] == "softmax"}
    for g in grid:
        if g["point"]["eps"] == 0.0:
            assert g["test_r2"] == pytest.approx(soft[g["point"]["tau"]], abs=1e-12)
    exp_bt = load_experiment(config_path, ["protocol.selection=best-test"])
    unit_bt = run_unit(exp_bt, "Sparse", exp_bt.bases[0], 0, X, y)
    bt = {r["model"]: r for r in unit_bt.results}
    # best-test is one grid point over the repetitions (tables/selection.py), never a per-repetition
    # choice: the unit's row records none, and its grid rows carry the test scores
    assert np.isnan(bt["eps-abrf"]["r2"]) and bt["eps-abrf"]["params"] == {}
    assert bt["eps-abrf"]["selection"] == "best-test"
    assert bt["rf"]["r2"] == rows["rf"]["r2"]  # nothing to choose: the row stands
    # best-test needs no inner CV: it is skipped, and the test scores are those of the full run
    grid_bt = [g for g in unit_bt.grid if g["model"] == "eps-abrf"]
    assert all(np.isnan(g["cv_r2"]) for g in grid_bt)
    assert [g["test_r2"] for g in grid_bt] == [g["test_r2"] for g in grid]


def test_splits_depend_only_on_seed_dataset_and_rep():
    a = split_indices(100, 0.2, derive_seed(1, "Sparse", 3))
    b = split_indices(100, 0.2, derive_seed(1, "Sparse", 3))
    c = split_indices(100, 0.2, derive_seed(1, "Sparse", 4))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])
    assert len(a[1]) == 20 and len(np.intersect1d(*a)) == 0


def test_a_model_whose_every_solve_fails_is_an_error_naming_the_unit(config_path, monkeypatch):
    import afr_cli.solvers.memo as solve_memo  # the protocol solves through the unit's memo
    from afr_cli.data import load_dataset
    from afr_cli.errors import SolverError

    def failing(*args, **kwargs):
        raise SolverError("no solver could fit the attention weights (ECOS: infeasible)")

    monkeypatch.setattr(solve_memo, "solve", failing)
    exp = load_experiment(config_path, ["models.2.grid.eps=[0.5]", "models.2.grid.tau=[1]"])
    X, y = load_dataset("Sparse")
    with pytest.raises(SolverError, match=r"Sparse / RF@10 / rep 0, model eps-abrf: every grid point"):
        run_unit(exp, "Sparse", exp.bases[0], 0, X, y)


def test_rep_index_seeding_is_the_papers_split_and_forest_seed(config_path):
    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split

    from afr_cli.data import load_dataset
    from afr_cli.engine.protocol import UnitSeeds

    exp = load_experiment(config_path, ["protocol.seeding=rep-index"])
    seeds = UnitSeeds(exp, "Sparse", exp.bases[0], 7)
    assert seeds.split == 7 and seeds.forest(0) == 7 and seeds.forest(-1) == 7
    X, y = load_dataset("Sparse")
    unit = run_unit(exp, "Sparse", exp.bases[0], 7, X, y)
    train, test = train_test_split(np.arange(len(y)), test_size=0.2, random_state=7)
    assert (unit.n_train, unit.n_test) == (len(train), len(test))
    forest = fit_forest(exp.bases[0], X[train], y[train], 7)  # scaling does not change a forest's partition
    rf = next(r for r in unit.results if r["model"] == "rf")
    assert rf["r2"] == pytest.approx(r2_score(y[test], forest.predict(X[test])), abs=1e-9)


@pytest.mark.slow
def test_papers_protocol_reproduces_their_sparse_baseline():
    """10 reps, rep-index seeding, noise-free draw with data seed 1: RF R² 0.470, ERT 0.452 (LARF Tables 3, 5)."""
    cfg = {
        "name": "paper-sparse",
        "data_seed": 1,
        "synthetic_noise": "none",
        "protocol": {"reps": 10, "seeding": "rep-index"},
        "datasets": ["Sparse"],
        "bases": [{"kind": "rf"}, {"kind": "ert"}],
        "models": [{"id": "forest", "family": "forest"}],
    }
    import tempfile

    from afr_cli.data import load_dataset

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "paper.yaml"
        path.write_text(yaml.safe_dump(cfg))
        exp = load_experiment(path)
    X, y = load_dataset("Sparse", 1, "none")
    for base, published in zip(exp.bases, (0.470, 0.452)):
        r2 = np.mean([run_unit(exp, "Sparse", base, rep, X, y).results[0]["r2"] for rep in range(10)])
        assert round(r2, 3) == published


def test_feature_scaling_moves_attention_but_not_forests(config_path):
    from afr_cli.data import load_dataset

    X, y = load_dataset("Friedman2")  # features on very different scales
    r2 = {}
    for scale in ("standard", "minmax", "none"):
        exp = load_experiment(config_path, [f"preprocess.scale={scale}", "models.1.grid.tau=[1]"])
        unit = run_unit(exp, "Friedman2", exp.bases[0], 0, X, y)
        r2[scale] = {r["model"]: r["r2"] for r in unit.results}
    assert r2["standard"]["rf"] == r2["minmax"]["rf"] == r2["none"]["rf"]
    softmax = {scale: r2[scale]["softmax"] for scale in r2}
    assert len(set(softmax.values())) == 3, softmax


def test_the_cli_protocol_and_the_estimators_agree_on_one_split(tmp_path):
    """The same split, scaling, forest seed and hyperparameters: `afr run` and the scikit-learn
    estimators (SATRF, LARF, EpsABRF) give the same test R², so a notebook reproduces a stored cell."""
    from sklearn.metrics import r2_score
    from sklearn.preprocessing import StandardScaler

    from afr_cli.data import load_dataset
    from afr_cli.engine.protocol import UnitSeeds
    from afr_cli.models import LARF, SATRF, EpsABRF

    forest = {"n_estimators": 12, "min_samples_leaf": 5, "max_features": 1.0}
    cfg = {
        "name": "agree",
        "protocol": {"reps": 1, "seeding": "rep-index"},
        "datasets": ["Friedman1"],
        "bases": [{"kind": "ert", **forest}],
        "models": [
            {"id": "y", "family": "sat-rf-yx", "params": {"eps": 0.5, "gamma": 0.25, "tau": 2.0, "kappa": 0.5}},
            {"id": "larf", "family": "em-w-larf", "params": {"tau0": 0.1, "M": 3}},
            {"id": "abrf", "family": "eps-abrf", "params": {"eps": 0.25, "tau": 1.0}},
        ],
        "solver": "ECOS",
    }
    path = tmp_path / "agree.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp = load_experiment(path)
    X, y = load_dataset("Friedman1")
    rep = 3
    unit = run_unit(exp, "Friedman1", exp.bases[0], rep, X, y)
    stored = {r["model"]: r["r2"] for r in unit.results}
    seeds = UnitSeeds(exp, "Friedman1", exp.bases[0], rep)
    train, test = seeds.split_rows(len(y))
    scaler = StandardScaler().fit(X[train])
    Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
    common = dict(base="ert", random_state=seeds.forest(-1), solver="ECOS", **forest)
    estimators = {
        "y": SATRF(variant="yx", eps=0.5, gamma=0.25, tau=2.0, kappa=0.5, **common),
        "larf": LARF(variant="em-w-larf", tau0=0.1, M=3, **common),
        "abrf": EpsABRF(eps=0.25, tau=1.0, **common),
    }
    for model_id, estimator in estimators.items():
        r2 = r2_score(y[test], estimator.fit(Xtr, y[train]).predict(Xte))
        assert r2 == pytest.approx(stored[model_id], abs=1e-9), model_id


@pytest.mark.slow
def test_each_run_that_adds_units_is_recorded_and_a_no_op_run_writes_nothing(config_path, tmp_path):
    from afr_cli.store import ResultsStore

    out = tmp_path / "hist"
    assert run_afr("run", str(config_path), "--reps", "1", "--jobs", "1", "--out", str(out), "-q").returncode == 0
    store = ResultsStore(out)
    runs = store.manifest()["runs"]
    assert len(runs) == 1 and runs[0]["reps"] == 1 and runs[0]["units_stored_before"] == 0
    assert set(runs[0]) >= {"started_at", "git_commit", "code_modified", "versions"}
    target = runs[0]["target"]  # recorded at the start, for `afr status`'s progress and ETA
    assert (target["datasets"], target["reps"], target["units"], target["workers"]) == (
        ["Friedman1", "Sparse"],
        1,
        2,
        1,
    )
    assert target["pid"] > 0 and target["host"]
    before = store.path.read_bytes()
    assert run_afr("run", str(config_path), "--reps", "1", "--jobs", "1", "--out", str(out), "-q").returncode == 0
    assert store.manifest()["runs"] == runs and store.path.read_bytes() == before  # nothing to run: untouched
    assert run_afr("run", str(config_path), "--reps", "2", "--jobs", "1", "--out", str(out), "-q").returncode == 0
    runs = store.manifest()["runs"]
    assert [r["reps"] for r in runs] == [1, 2] and runs[1]["units_stored_before"] == 2
    status = run_afr("status", str(out))
    assert status.returncode == 0 and "2 runs, code" in status.stdout


def test_a_store_from_before_run_histories_keeps_its_first_provenance():
    from afr_cli.engine.runner import run_history

    old = {"git_commit": "aaaa", "versions": {"numpy": "1"}}
    runs = run_history(old, {"git_commit": "bbbb", "versions": {"numpy": "2"}}, 10, 5)
    assert [r["git_commit"] for r in runs] == ["aaaa", "bbbb"] and runs[0]["versions"] == {"numpy": "1"}
    assert run_history({}, {"git_commit": "cccc", "versions": {}}, 3, 0)[0]["git_commit"] == "cccc"
