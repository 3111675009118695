"""``afr bench slurm``: afr's own cost per unit on a cluster, and units per minute in SLURM jobs.

On a cluster (``--cluster FILE``) every result comes back to afr's one process, which holds the
Dask scheduler and is the only writer of the store; past some number of jobs that process, not
the jobs, sets the pace. Three measurements:

- **Receiving and storing a unit**: the records of a config's tasks, computed once, are pickled
  as a worker sends them; afr's side (unpickling, ``write_unit``'s transaction) is timed per
  unit, CPU and wall.
- **A task's round trip through the scheduler**: a batch of tasks that do nothing, sent through
  the same path a run's tasks take (``ClusterUnits.run_unordered``) to one SLURM job; the CPU
  afr's process spends per task (the scheduler, the client and the comms all run in it).
- **Units per minute**: a whole run of the config's units with loky on 1 and 2 workers and in 1
  and 2 SLURM jobs of one core (``max_jobs``), each on a fresh store, wall time from the run's
  start to its end (for SLURM: the probe job, the jobs' queueing and their Python starting
  included, as a user waits for them), each run's rows checked cell for cell against loky's
  ``--jobs 1``.

With the mean CPU of a unit of the full reproduction (the committed stores under ``root``), the
cost per unit gives how many one-core jobs afr can keep busy: mean unit CPU / afr's time per unit
(the store's wall per unit, its commit waiting for the disk, plus the scheduler's CPU per task).
"""

from __future__ import annotations

import os
import pickle
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from afr_cli.benchmarks.dask_units import _calls, _timed_run, _Unseen, store_rows
from afr_cli.config.cluster_file import ClusterSpec
from afr_cli.config.experiment import load_experiment
from afr_cli.engine.cluster_jobs import ClusterUnits
from afr_cli.engine.runner import RunOptions, _run_task, prepare_store
from afr_cli.store.discover import stores_below
from afr_cli.store.reader import open_existing


def _nothing(i: int) -> int:
    return i


def receive_and_store(config: str, overrides: list, root: Path) -> dict:
    """afr's CPU and wall seconds per unit to unpickle a task's records and store each unit."""
    exp = load_experiment(config, overrides, root / "store")
    calls = _calls(exp)
    payloads = [pickle.dumps(_run_task(*args)) for args in calls]  # as a worker sends them
    store, _ = prepare_store(exp, fresh=True)
    units = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for payload in payloads:
        for _, unit in pickle.loads(payload):
            store.write_unit(unit)
            units += 1
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "units": units,
        "cpu_ms_per_unit": round(1000 * cpu / units, 2),
        "wall_ms_per_unit": round(1000 * wall / units, 2),
    }


def round_trip(spec: ClusterSpec, tasks: int) -> dict:
    """afr's CPU per task sent through the scheduler to one job and back (tasks that do nothing),
    after one task has warmed the worker."""
    with ClusterUnits(replace(spec, max_jobs=1)) as units:
        list(units.run_unordered(_nothing, [(0,)]))
        cpu, wall = time.process_time(), time.perf_counter()
        done = sum(1 for _ in units.run_unordered(_nothing, [(i,) for i in range(tasks)]))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "tasks": done,
        "cpu_ms_per_task": round(1000 * cpu / done, 2),
        "wall_ms_per_task": round(1000 * wall / done, 2),
    }


def reproduction_unit_cpu(root: Path) -> dict:
    """The mean recorded CPU seconds of a unit over the stores under ``root`` (those recording it)."""
    total, units = 0.0, 0
    for directory in stores_below(root):
        frame = open_existing(directory).frame("units")
        cpu = frame["cpu_seconds"].dropna()
        total, units = total + float(cpu.sum()), units + len(cpu)
    return {"units": units, "mean_cpu_s": round(total / units, 2) if units else None}


def units_per_minute(config: str, overrides: list, spec: ClusterSpec, jobs: tuple[int, ...], root: Path) -> dict:
    """A whole run's wall time and units per minute with loky and in SLURM jobs, rows checked."""
    quiet = {"progress": False, "export": False, "bar": _Unseen()}
    exp = load_experiment(config, overrides)
    units = len(exp.datasets) * len(exp.bases) * len(exp.protocol.axes()) * exp.protocol.reps
    rows, reference = [], None
    for where, n in [("loky", n) for n in jobs] + [("SLURM jobs", n) for n in jobs]:
        out = root / f"{where.split()[0].lower()}{n}"
        options = (
            RunOptions(jobs=n, **quiet)
            if where == "loky"
            else RunOptions(jobs=1, cluster=replace(spec, max_jobs=n, cores=1), **quiet)
        )
        wall = _timed_run(load_experiment(config, overrides, out), options)
        tables = store_rows(out)
        reference = reference if reference is not None else tables
        rows.append(
            {
                "where": where,
                "workers": n,
                "wall_s": round(wall, 2),
                "units_per_min": round(units / wall * 60, 1),
                "identical": tables == reference,
            }
        )
    return {"units": units, "rows": rows}


def run(
    config: str, datasets: list[str], reps: int, spec: ClusterSpec, jobs: tuple[int, ...], tasks: int, root: Path
) -> dict:
    """Every measurement on ``config``'s units at ``datasets``, repetitions 0..reps-1."""
    overrides = [("protocol.reps", reps), ("datasets", datasets)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="afr-bench-slurm-") as tmp:
        store = receive_and_store(config, overrides, Path(tmp))
        trip = round_trip(spec, tasks)
        scale = units_per_minute(config, overrides, spec, jobs, Path(tmp))
    reproduction = reproduction_unit_cpu(root)
    # afr's loop stores one unit at a time: its wall per unit (the store's commit waits for the
    # disk) and the scheduler's CPU per task (one task per unit at most) bound the units it takes in
    per_unit = store["wall_ms_per_unit"] + trip["cpu_ms_per_task"]
    busy = int(1000 * reproduction["mean_cpu_s"] / per_unit) if reproduction["mean_cpu_s"] else None
    return {
        "config": config,
        "datasets": datasets,
        "reps": reps,
        "cores": os.cpu_count(),
        "receive_and_store": store,
        "round_trip": trip,
        "scaling": scale,
        "reproduction": reproduction,
        "afr_ms_per_unit": round(per_unit, 2),
        "jobs_kept_busy": busy,
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
    }
