"""Each unit records its process time (``cpu_seconds``) beside its wall seconds: a run stores it,
the export carries it, stores and exports made before it read as they are (the column missing,
nothing required), re-export byte for byte, and ``afr status`` / ``afr reproduce --plan`` project
compute from it where recorded, else from wall time, saying which."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import yaml

from afr_cli.catalogue.knowledge import ExperimentSpec
from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.reproduction.pipeline import plan_experiment, render_plan
from afr_cli.store import ResultsStore, UnitRecord, open_existing
from afr_cli.store.export import EXPORT_DIR, ExportedStore, export_store, seed_store
from afr_cli.store.faults import REQUIRED_COLUMNS
from afr_cli.store.status import render_status, render_totals, store_status

REPO = Path(__file__).resolve().parents[1]
CONFIG = {
    "name": "cpu-test",
    "seed": 3,
    "protocol": {"reps": 2, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "softmax", "family": "eps-abrf", "params": {"eps": 0.0}, "grid": {"tau": [1, 10]}},
    ],
}


def _run(tmp_path: Path) -> Path:
    path = tmp_path / "cpu.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    out = tmp_path / CONFIG["name"]
    run_experiment(load_experiment(path, [], out), RunOptions(jobs=1, progress=False), echo=lambda *_: None)
    return out


def test_a_run_records_cpu_seconds_and_the_export_round_trips_them(tmp_path):
    out = _run(tmp_path)
    units = ResultsStore(out).frame("units")
    assert len(units) == 2 and (units["cpu_seconds"] > 0).all()
    exported = ExportedStore(out).frame("units")
    assert exported["cpu_seconds"].tolist() == units["cpu_seconds"].tolist()
    (out / "store.sqlite").unlink()  # store -> export -> store gives the same values
    seeded = seed_store(out).frame("units")
    assert seeded["cpu_seconds"].tolist() == units["cpu_seconds"].tolist()
    status = store_status(out)
    assert status.cpu_units == 2 and status.seconds_per_unit()[1] == "CPU"
    text = render_status(status)
    assert "of CPU (process time); " in text and "of unit wall time summed over the units" in text
    assert "recorded on" not in text  # both units record their CPU
    assert "latest run: " in text and "elapsed for its 2 units on 1 worker" in text
    assert "from recorded CPU for 1 store(s), from wall time for 0" in render_totals([status], workers=2)


def _export_from_before_cpu(tmp_path: Path) -> Path:
    """A committed export as it was before CPU was recorded: its store with every unit's
    cpu_seconds emptied, exported again (an empty optional column is left out of an export)."""
    made = tmp_path / "before"
    shutil.copytree(REPO / "results" / "satrf_surfaces" / EXPORT_DIR, made / EXPORT_DIR)
    store = seed_store(made)
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("UPDATE units SET cpu_seconds = NULL")
    export_store(made)
    store.path.unlink()
    return made


def test_cpu_seconds_is_optional_to_read_and_an_old_export_re_exports_byte_for_byte(tmp_path):
    assert "cpu_seconds" not in REQUIRED_COLUMNS["units"]
    before = _export_from_before_cpu(tmp_path)
    work = tmp_path / "satrf_surfaces"
    shutil.copytree(before / EXPORT_DIR, work / EXPORT_DIR)
    assert "cpu_seconds" not in [c for c, _ in ExportedStore(work).columns("units")]
    assert ExportedStore(work).frame("units")["cpu_seconds"].isna().all()  # read as missing
    status = store_status(work)  # an export made before CPU was recorded
    assert status.cpu_units == 0 and status.seconds_per_unit()[1] == "wall"
    assert "CPU-min" not in render_status(status)
    store = seed_store(work)  # the store made from it has the column, empty
    assert store.frame("units")["cpu_seconds"].isna().all()
    assert export_store(work) == []  # nothing changed: every byte as it was
    for file in (before / EXPORT_DIR).iterdir():
        assert (work / EXPORT_DIR / file.name).read_bytes() == file.read_bytes()


def test_extending_a_store_without_the_column_adds_it_and_projects_from_cpu(tmp_path):
    store = ResultsStore(tmp_path)
    store.create({"experiment": "demo", "config_hash": "abc"})
    with closing(sqlite3.connect(store.path)) as conn, conn:  # as a store made before the column
        conn.execute("ALTER TABLE units DROP COLUMN cpu_seconds")
    row = {
        "model": "rf",
        "r2": 0.5,
        "mae": 1.0,
        "rmse": 1.2,
        "params": {},
        "selection": "inner-cv",
        "cv_score": 0.4,
        "solver_status": {},
        "seconds": 1.0,
    }
    assert "cpu_seconds" not in dict(store.columns("units"))
    assert list(open_existing(tmp_path).frame("units")["cpu_seconds"]) == []  # read as missing
    store.create({"experiment": "demo", "config_hash": "abc"})  # a run opening it adds the column
    store.write_unit(UnitRecord("D", "RF", 0, 0, 8, 2, 0.1, 60.0, [row], []))  # no CPU measured: NULL
    store.write_unit(UnitRecord("D", "RF", 1, 1, 8, 2, 0.1, 60.0, [row], [], cpu_seconds=30.0))
    units = store.frame("units")
    assert np.isnan(units["cpu_seconds"][0]) and units["cpu_seconds"][1] == 30.0
    status = store_status(tmp_path)
    assert status.seconds_per_unit() == (30.0, "CPU") and status.compute_minutes == 2.0


def test_the_plan_says_whether_it_projects_from_cpu_or_wall(tmp_path):
    out = _run(tmp_path)
    spec = ExperimentSpec(tmp_path / "cpu.yaml", 0)
    planned = plan_experiment("demo", spec, tmp_path, 3, None)  # one more repetition than stored
    assert planned.measured_in == "CPU" and planned.seconds_per_unit > 0
    assert "CPU-min (from CPU)" in render_plan([planned], tmp_path, 2)
    units = ResultsStore(out).frame("units")
    assert abs(planned.seconds_per_unit - units["cpu_seconds"].mean()) < 1e-12
