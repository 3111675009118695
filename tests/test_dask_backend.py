"""--backend dask uses the cluster whatever its size: on a one-worker cluster every unit
runs on the worker, with the rows of --jobs 1; and a worker's allocator is given back the
large-block behaviour Dask's nanny switches off (afr_cli/engine/worker_setup.py)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.store import ResultsStore

CONFIG = {
    "name": "dask-test",
    "seed": 5,
    "protocol": {"reps": 3, "inner_folds": 3},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 10, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5], "tau": [1, 10]}},
    ],
}


def _tables(out) -> dict[str, pd.DataFrame]:
    """A store's tables as text, without what is timed (a unit's seconds, a solve's milliseconds)."""
    store = ResultsStore(out)
    grid = store.frame("grid")
    grid["solves"] = grid["solves"].map(lambda log: repr([[*e[:4], *e[5:]] for e in log or []]))
    timed = ["seconds", "forest_seconds", "cpu_seconds", "finished_at"]
    tables = {"results": store.frame("results"), "grid": grid, "units": store.frame("units")}
    return {k: df.drop(columns=timed, errors="ignore").astype(str).reset_index(drop=True) for k, df in tables.items()}


@pytest.mark.slow
def test_a_one_worker_cluster_runs_every_unit_on_its_worker_with_the_rows_of_jobs_1(tmp_path, capsys):
    """joblib's dask backend saw one core on a one-worker cluster and ran every unit in afr's own
    process; each unit now goes to the worker (the run's last line names it), whatever --jobs says
    (-1: every core of this machine, which the run's target no longer names as its workers), and
    the rows are those of a local --jobs 1 run, cell for cell."""
    distributed = pytest.importorskip("distributed")
    config = tmp_path / "dask.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    quiet = {"progress": False, "export": False}
    run_experiment(load_experiment(config, None, tmp_path / "local"), RunOptions(jobs=1, **quiet), echo=lambda *_: None)
    capsys.readouterr()
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        (worker,) = client.scheduler_info()["workers"]
        options = RunOptions(jobs=-1, backend="dask", scheduler=cluster.scheduler_address, **quiet)
        run_experiment(load_experiment(config, None, tmp_path / "dask"), options, echo=lambda *_: None)
        prepared = client.run(_worker_prepared)[worker]
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.endswith(f"; 3 tasks on 1 Dask worker ({worker})"), last
    assert prepared  # the nanny's MALLOC_TRIM_THRESHOLD_ was undone in the worker that ran the units
    assert ResultsStore(tmp_path / "dask").manifest()["runs"][-1]["target"]["workers"] == 1
    local, dask = _tables(tmp_path / "local"), _tables(tmp_path / "dask")
    for table in ("results", "grid", "units"):
        pd.testing.assert_frame_equal(local[table], dask[table], check_exact=True)


def _worker_prepared() -> bool:
    from afr_cli.engine import worker_setup

    return worker_setup._prepared.get("allocator", False)


FAULTS = """
import resource, sys
import numpy as np
from afr_cli.engine.worker_setup import prepare_worker
prepared = prepare_worker() if sys.argv[1] == "prepare" else False
block = np.ones(1 << 18)  # 2 MiB: above glibc's fixed 128 KiB mmap threshold, below the adaptive ceiling
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    a = np.empty(1 << 18)
    a[:] = block  # every page touched
    del a
print(prepared, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(how: str, trim: bool) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    if trim:
        env["MALLOC_TRIM_THRESHOLD_"] = "65536"  # as Dask's nanny starts a worker
    out = subprocess.run([sys.executable, "-c", FAULTS, how], env=env, capture_output=True, text=True, check=True)
    prepared, faults = out.stdout.split()
    return prepared, int(faults)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator")
def test_a_nanny_started_worker_gets_the_allocator_of_a_plain_process_back():
    """With MALLOC_TRIM_THRESHOLD_ set, each freed 2 MiB array goes back to the kernel and the
    next one faults its 512 pages in again; prepare_worker makes the process reuse the block, as
    a process started without the variable does; without the variable it changes nothing."""
    prepared, trimmed = _faults("leave", trim=True)
    fixed_prepared, fixed = _faults("prepare", trim=True)
    plain_prepared, plain = _faults("prepare", trim=False)
    assert (prepared, fixed_prepared, plain_prepared) == ("False", "True", "False")
    assert trimmed > 50 * 400  # every array's pages faulted in afresh
    assert fixed < trimmed / 10 and plain < trimmed / 10


@pytest.mark.slow
@pytest.mark.parametrize("address", ["nonsense", "tcp://127.0.0.1"])
def test_a_scheduler_address_that_reaches_nothing_is_one_line_before_any_store_is_touched(tmp_path, address):
    """The scheduler is reached before the store is created: an address without a port (or one
    nothing answers at, after the client's timeout) is one line, exit 2, and nothing written."""
    pytest.importorskip("distributed")
    config = tmp_path / "dask.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    out = tmp_path / "out"
    proc = run_afr("run", str(config), "--backend", "dask", "--scheduler", address, "--out", str(out), "-q")
    assert_one_line_error(proc, f"--scheduler: cannot reach a Dask scheduler at {address!r}", "allowed:")
    assert not out.exists()
