"""``afr run --cluster FILE`` against a real one-node SLURM (.ci/slurm-up brings it up; CI runs it
and sets AFR_REQUIRE_SLURM=1, so there a missing cluster fails these tests instead of skipping
them): units computed in SLURM jobs with the rows of ``--jobs 1``, a job killed mid-run without a
unit lost or stored twice, and no job of afr's left in ``squeue`` after the run, Ctrl-C or SIGTERM.
A run is two jobs of one core on a tiny experiment (most of its wall time is the jobs' Python
starting)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from importlib import metadata
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import afr_bin

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {
    "name": "slurm-test",
    "seed": 5,
    "protocol": {"reps": 4, "inner_folds": 3},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 10, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5], "tau": [1, 10]}},
    ],
}
TIMED = ["seconds", "forest_seconds", "cpu_seconds", "finished_at", "ran_on"]


def _slurm_state() -> str | None:
    """Why there is no usable SLURM here, or None when its node takes jobs."""
    if shutil.which("sinfo") is None:
        return "no SLURM here (sinfo not found): .ci/slurm-up installs and starts a one-node cluster"
    out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True)
    usable = ("idle", "mixed", "allocated", "completing")  # "idle*" and the like: not responding
    if not any(s in usable for s in out.stdout.split()):
        return f"no SLURM node takes jobs (sinfo: {(out.stdout + out.stderr).strip() or 'nothing'}): run .ci/slurm-up"
    return None


@pytest.fixture(scope="module")
def slurm() -> None:
    why = _slurm_state()
    if why is None:
        return
    if os.environ.get("AFR_REQUIRE_SLURM") == "1":
        pytest.fail(f"AFR_REQUIRE_SLURM=1 but {why}")
    pytest.skip(why)


def _jobs(prefix: str) -> list[tuple[str, str, str]]:
    """(id, name, state) of every job in squeue whose name starts with ``prefix``."""
    out = subprocess.run(["squeue", "-h", "-o", "%i|%j|%T"], capture_output=True, text=True, check=True).stdout
    return [tuple(line.split("|")) for line in out.splitlines() if line.split("|")[1].startswith(prefix)]


def _gone(prefix: str, within: float = 30.0) -> list[tuple[str, str, str]]:
    """The jobs of ``prefix`` still listed after ``within`` seconds (a cancelled job is listed as
    COMPLETING while SLURM ends its processes)."""
    deadline = time.monotonic() + within
    while (left := _jobs(prefix)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def _files(tmp_path: Path, reps: int = 4) -> tuple[Path, Path]:
    config, cluster = tmp_path / "exp.yaml", tmp_path / "cluster.yaml"
    config.write_text(yaml.safe_dump({**CONFIG, "protocol": {**CONFIG["protocol"], "reps": reps}}))
    cluster.write_text(
        yaml.safe_dump(
            {
                "scheduler": "slurm",
                "queue": "debug",
                "cores": 1,
                "memory": "1GB",
                "walltime": "00:10:00",
                "max_jobs": 2,
                "logs": str(tmp_path / "jobs"),
            }
        )
    )
    return config, cluster


def _start(config: Path, cluster: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [afr_bin(), "run", str(config), "--cluster", str(cluster), "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(condition, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"afr ended (exit {proc.returncode}) before the moment the test waits for: {out}{err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("timed out waiting for the run")
        time.sleep(0.3)


def _running(prefix: str) -> list[str]:
    return [i for i, name, state in _jobs(prefix) if state == "RUNNING" and not name.endswith("-probe")]


def _registered(prefix: str, logs: Path) -> list[str]:
    """The running jobs of ``prefix`` whose Dask worker has registered with afr's scheduler (its
    job's log says so)."""
    return [
        i
        for i in _running(prefix)
        if (logs / f"{prefix}-{i}.err").is_file()
        and "Registered to" in (logs / f"{prefix}-{i}.err").read_text(errors="replace")
    ]


def _stored(out: Path) -> int:
    try:
        return len(ResultsStore(out).frame("units"))
    except Exception:  # not created yet
        return 0


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    store = ResultsStore(out)
    grid = store.frame("grid")
    grid["solves"] = grid["solves"].map(lambda log: repr([[*e[:4], *e[5:]] for e in log or []]))
    tables = {"results": store.frame("results"), "grid": grid, "units": store.frame("units")}
    return {k: df.drop(columns=TIMED, errors="ignore").astype(str).reset_index(drop=True) for k, df in tables.items()}


@pytest.mark.slow
def test_two_jobs_one_killed_mid_run_store_every_unit_once_with_the_rows_of_jobs_1(slurm, tmp_path):
    """Every unit is computed in a SLURM job (its id in the store, `afr status` shows the split);
    one of the two jobs is cancelled while it holds tasks: they run on another job, no unit is
    lost or stored twice, the rows equal a local --jobs 1 run cell for cell; afr names a job an
    earlier run left queued, and after the run squeue lists no job of this one."""
    config, cluster = _files(tmp_path)
    earlier = subprocess.run(
        ["sbatch", "--parsable", "-H", "-J", "afr-units-1", "-o", "/dev/null", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()  # held: it waits in the queue, as a job of a run killed outright would
    try:
        proc = _start(config, cluster, tmp_path / "out")
        prefix = f"afr-units-{proc.pid}"
        # the first worker has just registered: it holds tasks (all four wait for a worker), its
        # first still importing afr, when its job is cancelled
        _wait_for(lambda: len(_registered(prefix, tmp_path / "jobs")) >= 1, proc)
        killed = _registered(prefix, tmp_path / "jobs")[0]
        subprocess.run(["scancel", killed], check=True)
        out, err = proc.communicate(timeout=240)
    finally:
        subprocess.run(["scancel", earlier], check=False)
    assert proc.returncode == 0, err
    assert f"{earlier} (afr-units-1, pending)" in err and f"scancel {earlier}" in err
    assert not [j for j in _jobs(prefix) if j[2] in ("PENDING", "RUNNING")]  # cancelled at the end
    assert not _gone(prefix)
    assert re.search(r"done in .*; 4 tasks on [12] Dask workers? in SLURM jobs \(\d+ submitted\)", out), out
    assert re.search(r"jobs: [0-2] pending, [12] running", err)  # the bar: jobs beside its units
    run_experiment(
        load_experiment(config, None, tmp_path / "local"),
        RunOptions(jobs=1, progress=False, export=False),
        echo=lambda *_: None,
    )
    units = ResultsStore(tmp_path / "out").frame("units")
    assert sorted(units["rep"]) == [0, 1, 2, 3]  # each unit once
    assert all(" job " in where for where in units["ran_on"])
    assert {where.rsplit(" ", 1)[1] for where in units["ran_on"]} - {killed}  # the killed job's tasks ran elsewhere
    local, remote = _tables(tmp_path / "local"), _tables(tmp_path / "out")
    for table in ("results", "grid", "units"):
        pd.testing.assert_frame_equal(local[table], remote[table], check_exact=True)
    status = subprocess.run(
        [afr_bin(), "status", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout
    jobs = units["ran_on"].value_counts()
    assert (
        "ran on: "
        + "; ".join(f"{w}: {n} unit{'s' * (n != 1)}" for w, n in sorted(jobs.items(), key=lambda x: (-x[1], x[0])))
        in status
    )


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_cancels_every_job_and_leaves_only_whole_units(slurm, tmp_path, stop):
    """Stopped while its jobs run (Ctrl-C once units are stored, SIGTERM as soon as the jobs run),
    afr exits 130 or 143 saying how many units are stored; squeue lists no job of the run that
    still waits or runs, and every stored unit is whole (all its models' rows)."""
    config, cluster = _files(tmp_path, reps=12)
    out = tmp_path / "out"
    proc = _start(config, cluster, out)
    prefix = f"afr-units-{proc.pid}"
    if stop == signal.SIGINT:
        _wait_for(lambda: _stored(out) >= 1, proc)
    else:
        _wait_for(lambda: len(_running(prefix)) >= 1, proc)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == (130 if stop == signal.SIGINT else 143), err
    assert not [j for j in _jobs(prefix) if j[2] in ("PENDING", "RUNNING")]
    assert not _gone(prefix)
    if out.joinpath("store.sqlite").exists():
        store = ResultsStore(out)
        units, results = store.frame("units"), store.frame("results")
        assert len(units) < 12 and len(results) == 2 * len(units)
        assert "resume" in err or "stored" in err


@pytest.mark.slow
def test_a_failure_inside_afr_cancels_the_jobs_it_submitted(slurm, tmp_path):
    """However afr's own code fails while jobs wait or run, leaving the cluster cancels them."""
    from afr_cli.config.cluster_file import load_cluster_file
    from afr_cli.engine.cluster_jobs import ClusterUnits, job_name

    _, cluster = _files(tmp_path)
    with pytest.raises(RuntimeError, match="afr failed"), ClusterUnits(load_cluster_file(cluster)) as units:
        units.cluster.scale(jobs=2)
        deadline = time.monotonic() + 30
        while len(_jobs(job_name())) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert len(_jobs(job_name())) == 2
        raise RuntimeError("afr failed")
    assert not [j for j in _jobs(job_name()) if j[2] in ("PENDING", "RUNNING")]
    assert not _gone(job_name())


@pytest.mark.slow
def test_a_python_the_jobs_cannot_run_is_one_line_naming_it_before_any_worker_job(slurm, tmp_path):
    """The probe job runs the file's python as a job would: a path the job cannot run is one line
    naming the file, the key and the path, and no job is left queued; this Python passes, the job
    importing afr with this process's package versions."""
    from afr_cli.config.cluster_file import load_cluster_file
    from afr_cli.engine.cluster_jobs import job_name, probe
    from afr_cli.errors import AfrInputError

    _, cluster = _files(tmp_path)
    cluster.write_text(cluster.read_text() + "python: /nonexistent/bin/python\n")
    with pytest.raises(AfrInputError) as err:
        probe(load_cluster_file(cluster))
    message = str(err.value)
    assert message.startswith(f"{cluster}: python: a job could not run /nonexistent/bin/python (")
    assert "\n" not in message and "allowed:" in message
    assert not [j for j in _jobs(job_name()) if j[2] in ("PENDING", "RUNNING")]
    cluster.write_text(cluster.read_text().replace("queue: debug", "queue: nosuch"))
    with pytest.raises(AfrInputError, match=r"SLURM did not run the probe job \(srun: error: invalid partition"):
        probe(load_cluster_file(cluster))  # refused at once: SLURM's own words, one line
    (tmp_path / "good").mkdir()
    found = probe(load_cluster_file(_files(tmp_path / "good")[1]))  # this Python: the job imports afr
    assert found["versions"]["numpy"] == metadata.version("numpy") and found["afr_cli"]
