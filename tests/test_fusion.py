"""Experiments that fit the same forests run fused (``afr reproduce``: unit_groups.fuse_tasks,
runner.run_experiments): each forest of a (repetition, fold) is fitted once, and every store
gets the rows it gets when its experiment runs alone, whatever the number of workers or the
backend, and after an interrupted run is resumed. Experiments that do not share (another scaling
or data seed, derived seeds) are not fused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.forest_cache import ForestCache
from afr_cli.engine.runner import RunOptions, run_experiments
from afr_cli.engine.shared_work import TODAY, Speedups
from afr_cli.engine.tasks import fuse_tasks, run_fused_task, unit_tasks
from afr_cli.ensembles.random_forests import _Forest
from afr_cli.errors import RunInterrupted
from afr_cli.publish.bench_blocks import bench_blocks
from afr_cli.store import ResultsStore
from afr_cli.store.bench_records import read_records
from tests.conftest import assert_one_line_error, run_afr

BASE = {
    "seed": 3,
    "data_seed": 1,
    "synthetic_noise": "none",
    "protocol": {"reps": 2, "inner_folds": 2, "seeding": "rep-index"},
    "preprocess": {"scale": "standard"},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 10}],
}
ABRF = {
    **BASE,
    "name": "fa",
    "models": [{"id": "rf", "family": "forest"}, {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5]}}],
}
SATRF = {
    **BASE,
    "name": "fb",
    "models": [
        {"id": "sat-rf-y", "family": "sat-rf-y", "grid": {"eps": [0.0, 1.0], "gamma": [0.0, 0.5]}},
        {"id": "eps-abrf", "family": "eps-abrf", "params": {"tau": 1.0}, "grid": {"eps": [0.0, 0.5]}},
    ],
}
LARGER = {
    **ABRF,
    "name": "ff",
    "bases": [{"kind": "rf", "n_estimators": 12, "min_samples_leaf": 10}],
    "models": [{"id": "rf", "family": "forest"}],
}  # its first 8 trees are fa's and fb's forest
MINMAX = {**ABRF, "name": "fc", "preprocess": {"scale": "minmax"}}  # other training rows: not fused
OTHER_DATA = {**ABRF, "name": "fd", "data_seed": 2}  # other data: not fused
DERIVED = {**ABRF, "name": "fe", "protocol": {**BASE["protocol"], "seeding": "derived"}}  # other seeds
QUIET = dict(progress=False, export=False)


def _load(tmp_path: Path, config: dict, out: str):
    path = tmp_path / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config))
    return load_experiment(path, [], tmp_path / out / config["name"])


def _rows(directory: Path) -> dict[str, pd.DataFrame]:
    """A store's rows without the times (seconds, solve-log milliseconds, when it finished)."""
    store = ResultsStore(directory)
    results = store.frame("results").drop(columns=["seconds"])
    grid = store.frame("grid")
    grid["solves"] = grid["solves"].map(lambda log: repr([e[:4] + e[5:] for e in log or []]))
    units = store.frame("units").drop(columns=["forest_seconds", "seconds", "finished_at", "cpu_seconds"])
    return {"results": results.astype(str), "grid": grid.astype(str), "units": units.astype(str)}


def _assert_same_rows(a: Path, b: Path) -> None:
    ra, rb = _rows(a), _rows(b)
    for table in ra:
        pd.testing.assert_frame_equal(ra[table], rb[table], check_exact=True)
    assert len(ra["units"]) == 2  # 1 dataset x 1 base x 2 reps: nothing lost, nothing twice


@pytest.fixture
def alone(tmp_path):
    """Each experiment run on its own (fusion off), into tmp_path/alone/<name>."""
    for config in (ABRF, SATRF, MINMAX, LARGER):
        run_experiments([_load(tmp_path, config, "alone")], RunOptions(jobs=1, speedups=Speedups(fuse=False), **QUIET))
    return tmp_path / "alone"


def _count_fits(monkeypatch) -> list:
    fitted = []
    fit = _Forest.fit
    monkeypatch.setattr(_Forest, "fit", lambda self, *a, **p: fitted.append(p["n_estimators"]) or fit(self, *a, **p))
    return fitted


def test_only_experiments_fitting_the_same_forests_are_fused(tmp_path):
    exps = [_load(tmp_path, c, "plan") for c in (ABRF, SATRF, MINMAX, OTHER_DATA, DERIVED)]
    todo = [("Friedman1", 0, (0.8, 0.0), r) for r in range(2)]
    tasks = fuse_tasks(exps, [unit_tasks(e, todo) for e in exps])
    assert sorted(tuple(i for i, _ in t.parts) for t in tasks) == [(0, 1), (0, 1), (2,), (2,), (3,), (3,), (4,), (4,)]
    assert all(len({part.rep for _, part in t.parts}) == 1 for t in tasks)
    unfused = fuse_tasks(exps, [unit_tasks(e, todo) for e in exps], Speedups(fuse=False))
    assert len(unfused) == 10 and all(len(t.parts) == 1 for t in unfused)
    assert not TODAY.fuse and Speedups().fuse


def test_a_fused_run_fits_each_forest_once_and_gives_every_store_its_own_rows(tmp_path, alone, monkeypatch):
    fitted = _count_fits(monkeypatch)
    exps = [_load(tmp_path, c, "fused") for c in (ABRF, SATRF, MINMAX, LARGER)]
    run_experiments(exps, RunOptions(jobs=1, **QUIET))
    # 2 reps x 3 stages (2 folds + refit): once for fa, fb and ff together (12 trees, fa and fb
    # reading its first 8), once for fc
    assert sorted(fitted) == [8] * 6 + [12] * 6
    for config in (ABRF, SATRF, MINMAX, LARGER):
        _assert_same_rows(alone / config["name"], tmp_path / "fused" / config["name"])


def test_an_interrupted_fused_run_resumes_with_what_each_store_lacks(tmp_path, alone, monkeypatch):
    exps = [_load(tmp_path, c, "resumed") for c in (ABRF, SATRF, MINMAX)]
    write = ResultsStore.write_unit
    written = []

    def interrupted(self, unit):
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(unit.base)
        return write(self, unit)

    monkeypatch.setattr(ResultsStore, "write_unit", interrupted)
    with pytest.raises(
        RunInterrupted, match=r"units stored; this command resumes with the missing ones: afr reproduce --all$"
    ):
        run_experiments(exps, RunOptions(jobs=1, resume=["afr", "reproduce", "--all"], **QUIET))  # as afr reproduce
    monkeypatch.setattr(ResultsStore, "write_unit", write)
    stored = [len(ResultsStore(e.results).done_unit_keys()) for e in exps]
    assert sum(stored) == 3  # the units stored before the interrupt are whole
    fitted = _count_fits(monkeypatch)
    again = [_load(tmp_path, c, "resumed") for c in (ABRF, SATRF, MINMAX)]
    run_experiments(again, RunOptions(jobs=1, **QUIET))
    assert 0 < len(fitted) < 2 * 3 * 2  # only the missing units were computed
    for config in (ABRF, SATRF, MINMAX):
        _assert_same_rows(alone / config["name"], tmp_path / "resumed" / config["name"])


def test_two_workers_give_the_rows_of_one(tmp_path, alone):
    exps = [_load(tmp_path, c, "two") for c in (ABRF, SATRF, MINMAX)]
    run_experiments(exps, RunOptions(jobs=2, **QUIET))
    for config in (ABRF, SATRF, MINMAX):
        _assert_same_rows(alone / config["name"], tmp_path / "two" / config["name"])


def test_a_forest_cache_gives_the_same_rows_and_stays_within_its_bound(tmp_path, alone):
    exps = [_load(tmp_path, c, "cache") for c in (ABRF, SATRF)]
    todo = [("Friedman1", 0, (0.8, 0.0), r) for r in range(2)]
    tasks = fuse_tasks(exps, [unit_tasks(e, todo) for e in exps], Speedups(fuse=False))
    tasks.sort(key=lambda t: t.parts[0][1].rep)  # sharers next to each other
    cache = ForestCache(max_bytes=10**8)
    records = {0: [], 1: []}
    data = [load_one(e, "Friedman1") for e in exps]
    for task in tasks:
        for i, record in run_fused_task(exps, task, data, Speedups(fuse=False), cache=cache):
            records[i].append(record)
    assert cache.hits == 2 * 3 and cache.misses == 2 * 3 * 2 - cache.hits  # the second experiment reads all
    assert 0 < cache.peak_bytes <= cache.max_bytes
    small = ForestCache(max_bytes=1)
    run_fused_task(exps, tasks[0], data, Speedups(fuse=False), cache=small)
    assert len(small) == 0 and small.hits == 0 and small.misses == 3  # nothing fits under the bound: none kept
    for i, config in enumerate((ABRF, SATRF)):
        store = ResultsStore(tmp_path / "cache" / config["name"])
        store.create({"config_hash": exps[i].unit_hash()})
        for record in sorted(records[i], key=lambda r: r.rep):
            store.write_unit(record)
    for config in (ABRF, SATRF):
        a, b = _rows(alone / config["name"]), _rows(tmp_path / "cache" / config["name"])
        for table in ("results", "grid"):
            pd.testing.assert_frame_equal(a[table], b[table], check_exact=True)


@pytest.mark.slow
def test_a_fused_run_on_dask_gives_the_rows_of_a_local_one(tmp_path, alone):
    distributed = pytest.importorskip("distributed")
    exps = [_load(tmp_path, c, "dask") for c in (ABRF, SATRF, MINMAX)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        run_experiments(exps, RunOptions(jobs=-1, backend="dask", scheduler=cluster.scheduler_address, **QUIET))
    for config in (ABRF, SATRF, MINMAX):
        _assert_same_rows(alone / config["name"], tmp_path / "dask" / config["name"])


def test_the_plan_names_the_experiments_run_fused_and_projects_the_saving():
    proc = run_afr("reproduce", "satrf", "dm", "--plan", "--reps", "101", "--datasets", "Wine")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("shared forests: abrf_rf + ")]
    assert len(lines) == 1 and "satrf_rf" in lines[0] and "dm_soft" in lines[0] and "abrf_ert" not in lines[0]
    assert re.search(
        r": 1 fused task, [1-9]\d* units read forests another experiment fits, saving about "
        r"(?:< )?[\d.]+ CPU-min$",
        lines[0],
    ), lines[0]
    assert "upper bound" in proc.stdout


def test_bench_fusion_measures_both_ways_against_today_in_one_run(tmp_path):
    paths = []
    for config in (ABRF, SATRF):
        paths.append(tmp_path / f"{config['name']}.yaml")
        paths[-1].write_text(yaml.safe_dump(config))
    proc = run_afr(
        "bench",
        "fusion",
        *map(str, paths),
        "--datasets",
        "Friedman1",
        "--workers",
        "1",
        "--format",
        "json",
        "--record",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    rows = {r["path"]: r for r in result["rows"]}
    (record,) = read_records(tmp_path / "results", "fusion")  # --record: what afr report renders
    assert record["result"] == result and record["key"] == f"Friedman1-reps1-{ABRF['name']}-{SATRF['name']}"
    block = bench_blocks(tmp_path / "results")["bench:fusion"]
    units = rows["today"]["units"]
    assert (
        f"| Friedman1 ({units}) | cache | 1 | {rows['cache']['tasks']} | {rows['cache']['cpu_s']:.2f} | "
        f"{rows['cache']['ratio']:.2f}x | 3 | 3 | 50% | {rows['cache']['peak_rss_mib']:.0f} | yes |"
    ) in block
    assert "held at most 512 MiB per worker" in block
    assert set(rows) == {"today", "fused", "cache"} and all(r["identical"] for r in rows.values())
    assert rows["today"]["fits"] == 2 * 3 and rows["today"]["reuses"] == 0  # 2 experiments x 3 stages
    assert rows["fused"]["fits"] == rows["cache"]["fits"] == 3 and rows["cache"]["hit_rate"] == 0.5
    assert all(r["cpu_s"] > 0 and r["peak_rss_mib"] > 0 and r["ratio"] > 0 for r in rows.values())
    assert_one_line_error(run_afr("bench", "fusion", str(paths[0]), "--workers", "0"), "--workers")
    assert_one_line_error(run_afr("bench", "fusion", str(paths[0]), "--datasets", "Iris"), "--datasets", "Friedman1")
