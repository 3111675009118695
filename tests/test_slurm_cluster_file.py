"""The cluster file of ``--cluster FILE`` (no SLURM needed): a bad one is one line and exit 2
before anything is written, the docs' own file validates into the job script it describes, the
other schedulers' scripts are written in their own terms, and where a unit ran (``ran_on``) is a
column stores and exports of any age read alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.config.cluster_file import load_cluster_file
from afr_cli.engine.provenance import where_this_runs
from afr_cli.errors import AfrInputError
from afr_cli.store import STORE_FILE, ResultsStore, UnitRecord
from afr_cli.store.export import export_store
from afr_cli.store.reader import open_existing
from afr_cli.store.status import render_status, store_status

ROOT = Path(__file__).resolve().parent.parent
GOOD = {"scheduler": "slurm", "queue": "debug", "cores": 2, "memory": "4GB", "walltime": "1-02:00:00", "max_jobs": 3}


def _docs_cluster_file() -> str:
    """The YAML block of docs/experiments.md's "On a SLURM cluster" section."""
    text = (ROOT / "docs" / "experiments.md").read_text()
    section = text.split("## On a SLURM cluster", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"scheduler": "kubernetes"}, "scheduler: 'kubernetes' is not allowed; allowed: one of slurm, pbs, sge, lsf"),
        ({"cores": 0}, "cores: 0 is not allowed; allowed: an integer >= 1"),
        ({"max_jobs": True}, "max_jobs: True is not allowed"),
        ({"memory": "lots"}, "memory: 'lots' is not allowed; allowed: memory of each job, e.g. 4GB"),
        ({"walltime": "90 minutes"}, "walltime: '90 minutes' is not allowed; allowed: each job's time limit, HH:MM:SS"),
        ({"prepare": "module load python"}, "prepare: 'module load python' is not allowed; allowed: a list"),
        ({"partition": "debug"}, "'partition' is not a cluster key; allowed: scheduler, queue,"),
    ],
)
def test_a_bad_cluster_key_is_one_line_naming_the_file_the_key_and_what_is_allowed(tmp_path, change, needle):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({**GOOD, **change}))
    with pytest.raises(AfrInputError) as err:
        load_cluster_file(path)
    assert str(err.value).startswith(f"{path}: ") and needle in str(err.value), str(err.value)


def test_a_cluster_file_without_a_scheduler_is_refused(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text("queue: debug\n")
    with pytest.raises(AfrInputError, match="scheduler: missing; allowed: one of slurm"):
        load_cluster_file(path)


@pytest.mark.slow
def test_afr_run_with_a_bad_cluster_file_exits_2_before_anything_is_written(tmp_path):
    config, cluster, out = tmp_path / "exp.yaml", tmp_path / "cluster.yaml", tmp_path / "out"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "c",
                "datasets": ["Friedman1"],
                "bases": [{"kind": "rf", "n_estimators": 5}],
                "models": [{"id": "rf", "family": "forest"}],
            }
        )
    )
    cluster.write_text(yaml.safe_dump({**GOOD, "cores": "four"}))
    proc = run_afr("run", str(config), "--cluster", str(cluster), "--out", str(out))
    assert_one_line_error(proc, f"{cluster}: cores: 'four' is not allowed")
    assert not out.exists()


def test_the_docs_cluster_file_validates_into_the_job_script_it_describes(tmp_path):
    """docs/experiments.md's cluster file, as written, through `afr validate --cluster`: its
    partition, account, cores, memory, walltime, directive and preparing lines in the script."""
    path = tmp_path / "cluster.yaml"
    path.write_text(_docs_cluster_file())
    proc = run_afr("validate", "--cluster", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    script = proc.stdout
    for line in (
        "#SBATCH -p compute",
        "#SBATCH -A my-project",
        "#SBATCH --cpus-per-task=4",
        "#SBATCH --mem=15G",
        "#SBATCH -t 04:00:00",
        "#SBATCH --qos=normal",
        "module load python/3.11",
        "source $HOME/afr/.venv/bin/activate",
        "#SBATCH -J afr-units-",
    ):
        assert line in script, (line, script)
    assert re.search(r"^python -m distributed.cli.dask_worker .* --nthreads 1 .*--nworkers 4", script, re.M), script
    assert f"{path}: ok (at most 10 slurm jobs of 4 cores)" in script


def test_every_scheduler_writes_the_walltime_and_account_in_its_own_terms(tmp_path):
    from afr_cli.engine.cluster_jobs import job_script

    scripts = {}
    for scheduler in ("slurm", "pbs", "sge", "lsf"):
        path = tmp_path / f"{scheduler}.yaml"
        path.write_text(yaml.safe_dump({**GOOD, "scheduler": scheduler, "account": "proj"}))
        scripts[scheduler] = job_script(load_cluster_file(path))
    assert not (tmp_path / "afr-jobs").exists() and not (ROOT / "afr-jobs").exists()  # no log directory made
    assert "#SBATCH -t 1-02:00:00" in scripts["slurm"] and "#SBATCH -A proj" in scripts["slurm"]
    assert "walltime=26:00:00" in scripts["pbs"] and "#PBS -A proj" in scripts["pbs"]
    assert "h_rt=26:00:00" in scripts["sge"] and "#$ -P proj" in scripts["sge"]
    assert "#BSUB -W 26:00" in scripts["lsf"] and '#BSUB -P "proj"' in scripts["lsf"]


def _unit(rep: int, ran_on: str | None) -> UnitRecord:
    results = [
        {
            "model": "rf",
            "r2": 0.5,
            "mae": 1.0,
            "rmse": 2.0,
            "params": {},
            "selection": "inner-cv",
            "cv_score": 0.4,
            "solver_status": {},
            "seconds": 0.1,
        }
    ]
    return UnitRecord("Friedman1", "RF", rep, rep, 30, 10, 0.5, 1.0, results, [], ran_on=ran_on)


def test_where_a_unit_ran_is_stored_exported_and_shown_and_absent_before_it(tmp_path, monkeypatch):
    """A store without places (made before them) exports without the column and reads it as
    None; a store with them exports it, and `afr status` counts the units by place."""
    monkeypatch.setenv("SLURM_JOB_ID", "17")
    here = where_this_runs()
    assert here.endswith(" job 17")
    old, new = tmp_path / "old", tmp_path / "new"
    for directory, places in ((old, [None, None]), (new, [here, here.replace("17", "18")])):
        store = ResultsStore(directory)
        store.create({"experiment": "e", "config_hash": "h", "runs": [{"reps": 2}]})
        for rep, place in enumerate(places):
            store.write_unit(_unit(rep, place))
        export_store(directory)
        (directory / STORE_FILE).unlink()
    assert "ran_on" not in (old / "export" / "manifest.json").read_text()
    assert list(open_existing(old).frame("units")["ran_on"]) == [None, None]
    assert "ran on" not in render_status(store_status(old))
    assert list(open_existing(new).frame("units")["ran_on"]) == [here, here.replace("17", "18")]
    assert f"ran on: {here}: 1 unit; {here.replace('17', '18')}: 1 unit" in render_status(store_status(new))
