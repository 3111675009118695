"""``afr bench dask``: what a unit costs on a Dask worker, and how a run scales with the workers.

Two measurements of one config's units (its datasets, repetitions 0..reps-1, fused as a run
fuses them):

- **CPU per unit, by where it runs**: the same tasks in afr's own process (``--jobs 1``), in a
  loky worker process (``--jobs N``), in a second loky worker with glibc's thresholds set as
  engine/worker_setup.py sets them on a Dask worker (whether they would save CPU in every unit
  process: measured here, and a run does not set them), on the worker of a one-worker local
  Dask cluster as
  ``--backend dask`` runs them (afr_cli/engine/dask_backend.py, the worker's allocator prepared by
  engine/worker_setup.py), and on a second such worker left as Dask's nanny starts it (its
  ``MALLOC_TRIM_THRESHOLD_`` in force: a cost this benchmark measures). One task at a time, each task
  in every place in turn (the order rotating by task and round), so a change of the machine's
  load falls on every place alike; a unit's CPU is its process time in its worker, as a store
  records it, and on Dask also the unit's own thread's time (the rest is the worker's event
  loop: heartbeats, the sampling profiler, while the unit ran).
- **Units per minute by workers**: a whole ``afr run --backend dask`` (the runner, its store
  writes) on a local cluster of 1, 2, ... single-thread worker processes, and ``--jobs 1`` in
  afr's process as the reference whose rows every Dask run must equal, cell for cell (every
  table, without the times). Wall time from the run's start to its end, the cluster started
  before it; the load average before and after, since other work on the machine slows it.

A local cluster's nanny writes its workers' variables (``MALLOC_TRIM_THRESHOLD_``,
``OMP_NUM_THREADS`` ...) into this process's environment, which a loky worker spawned later would
inherit; the environment is restored as soon as each cluster has started.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from afr_cli.config.experiment import Experiment, load_experiment
from afr_cli.core.quiet_interrupt import quiet_worker
from afr_cli.engine.dask_backend import DaskUnits
from afr_cli.engine.experiment_data import load_experiment_data
from afr_cli.engine.runner import RunOptions, _run_task, _Running, _task_args, run_experiments
from afr_cli.engine.shared_work import Speedups
from afr_cli.engine.tasks import fuse_tasks, unit_tasks
from afr_cli.engine.worker_setup import set_thresholds
from afr_cli.store import ResultsStore

PLACES = (
    "in afr's process",
    "loky worker",
    "Dask worker",
    "Dask worker, nanny's allocator",
    "loky worker, thresholds set",
)  # the last against the second: what the thresholds would do in a run's loky workers
TIMED_COLUMNS = ("seconds", "forest_seconds", "cpu_seconds", "finished_at", "ran_on")  # ran_on: where, not what


def _timed(function: Callable[..., Any], args: tuple) -> tuple[Any, float]:
    """``function(*args)`` and the CPU time of the thread that ran it."""
    started = time.thread_time()
    return function(*args), time.thread_time() - started


@contextmanager
def local_cluster(workers: int) -> Iterator[Any]:
    """A local Dask cluster of ``workers`` single-thread worker processes, this process's
    environment as it was before the nanny wrote its workers' variables into it."""
    from distributed import LocalCluster

    saved = dict(os.environ)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    os.environ.clear()
    os.environ.update(saved)
    try:
        yield cluster
    finally:
        cluster.close()


def _thresholds_set() -> None:
    """A loky worker's start for the bench's last place: quiet on an interrupt, as a run's
    workers are, with glibc's thresholds set."""
    quiet_worker()
    set_thresholds()


def _calls(exp: Experiment) -> list[tuple]:
    """Every task of the experiment's units as the runner sends it to a worker (its arguments)."""
    data, _ = load_experiment_data(exp)
    reps = exp.protocol.reps
    todo = [
        (d, b, a, r)
        for d in exp.datasets
        for b in range(len(exp.bases))
        for a in exp.protocol.axes()
        for r in range(reps)
    ]
    speedups = Speedups()
    tasks = fuse_tasks([exp], [unit_tasks(exp, todo, speedups)], speedups)
    active = [_Running(exp, ResultsStore(exp.results), todo, data, len(todo))]
    return [(*_task_args(active, task), speedups) for task in tasks]


def unit_cpu(exp: Experiment, rounds: int) -> dict:
    """Each task's units' CPU in every place (``PLACES``), after one warm-up task in each."""
    from joblib.externals.loky import ProcessPoolExecutor, get_reusable_executor

    calls = _calls(exp)
    loky = get_reusable_executor(max_workers=1, initializer=quiet_worker)
    loky.submit(int).result()  # spawned now, before any nanny's variables are in this environment
    prepared_loky = ProcessPoolExecutor(max_workers=1, initializer=_thresholds_set)
    prepared_loky.submit(int).result()
    with local_cluster(1) as prepared, local_cluster(1) as plain, DaskUnits(prepared.scheduler_address) as dask:
        from distributed import Client

        with Client(plain, set_as_default=False) as client:
            run: dict[str, Callable[[tuple], tuple[Any, float]]] = {
                PLACES[0]: lambda args: _timed(_run_task, args),
                PLACES[1]: lambda args: loky.submit(_timed, _run_task, args).result(),
                PLACES[2]: lambda args: next(dask.run_unordered(_timed, [(_run_task, args)])),
                PLACES[3]: lambda args: client.submit(_timed, _run_task, args, pure=False).result(),
                PLACES[4]: lambda args: prepared_loky.submit(_timed, _run_task, args).result(),
            }
            for place in PLACES:
                run[place](calls[0])
            samples: dict[str, list[tuple[float, float]]] = {p: [] for p in PLACES}
            for r in range(rounds):
                for k, args in enumerate(calls):
                    turn = (r + k) % len(PLACES)
                    for place in PLACES[turn:] + PLACES[:turn]:
                        records, thread = run[place](args)
                        process = sum(unit.cpu_seconds for _, unit in records)
                        samples[place].append((process, thread))
    loky.shutdown(wait=True)
    prepared_loky.shutdown(wait=True)
    return {"tasks": len(calls), "rounds": rounds, "places": [_place(p, samples) for p in PLACES]}


def _place(place: str, samples: dict[str, list[tuple[float, float]]]) -> dict:
    """One place's CPU per task: median process time, its thread's share, and its paired ratio to
    the same tasks in the loky worker."""
    own, loky = samples[place], samples[PLACES[1]]
    return {
        "place": place,
        "median_cpu_s": round(statistics.median(p for p, _ in own), 3),
        "total_cpu_s": round(sum(p for p, _ in own), 2),
        "median_thread_cpu_s": round(statistics.median(t for _, t in own), 3),
        "ratio_to_loky": round(statistics.median(a / b for (a, _), (b, _) in zip(own, loky)), 3),
    }


def store_rows(directory: Path) -> dict[str, list]:
    """A store's tables without what is timed (a unit's seconds, a solve's milliseconds): equal
    for two runs of the same units wherever they ran."""
    store = ResultsStore(directory)
    tables = {}
    for name in ("results", "grid", "units"):
        df = store.frame(name).drop(columns=list(TIMED_COLUMNS), errors="ignore")
        if "solves" in df:
            df["solves"] = df["solves"].map(lambda log: [[*e[:4], *e[5:]] for e in log or []])
        tables[name] = df.astype(str).values.tolist()
    return tables


class _Unseen:
    """A progress bar that shows nothing: the runner's per-dataset lines stay out of the result."""

    def update(self, n: int) -> None:
        """Nothing to show."""

    def write(self, line: str) -> None:
        """Nothing to show."""


def _timed_run(exp: Experiment, options: RunOptions) -> float:
    """The wall seconds of a whole run of the experiment's units."""
    started = time.perf_counter()
    run_experiments([exp], options, echo=lambda *_: None)
    return time.perf_counter() - started


def _warm(function: Callable[..., Any], args: tuple) -> None:
    """Run one task on a worker and drop its result: its imports and compiled code are loaded, as
    they are in afr's process, which ran the reference before."""
    function(*args)


def scaling(config: str, overrides: list, workers: tuple[int, ...], root: Path) -> dict:
    """Units per minute of a whole run in afr's process (``--jobs 1``, the reference) and on local
    clusters of each count of ``workers``, every worker having run one task first (untimed: afr's
    process was warm too); whether each Dask run's rows equal the reference's."""
    from distributed import Client

    quiet = {"progress": False, "export": False, "bar": _Unseen()}
    exp = load_experiment(config, overrides, root / "jobs1")
    first = _calls(exp)[0]
    units = len(exp.datasets) * len(exp.bases) * len(exp.protocol.axes()) * exp.protocol.reps
    load = [os.getloadavg()[0]]
    wall = _timed_run(exp, RunOptions(jobs=1, **quiet))
    reference = store_rows(root / "jobs1")
    rows = [{"where": "afr's process (--jobs 1)", "workers": 1, "wall_s": round(wall, 2), "identical": True}]
    for n in workers:
        with local_cluster(n) as cluster:
            with Client(cluster, set_as_default=False) as client:
                client.run(_warm, _run_task, first)  # every worker: its first task's imports, untimed
            out = root / f"dask{n}"
            options = RunOptions(jobs=1, backend="dask", scheduler=cluster.scheduler_address, **quiet)
            wall = _timed_run(load_experiment(config, overrides, out), options)
        rows.append(
            {"where": "Dask", "workers": n, "wall_s": round(wall, 2), "identical": store_rows(out) == reference}
        )
    load.append(os.getloadavg()[0])
    for row in rows:
        row["units_per_min"] = round(units / row["wall_s"] * 60, 1)
    return {"units": units, "rows": rows, "load_average": [round(x, 2) for x in load]}


def run(config: str, datasets: list[str], reps: int, workers: tuple[int, ...], rounds: int) -> dict:
    """Both measurements on ``config``'s units at ``datasets``, repetitions 0..reps-1."""
    overrides = [("protocol.reps", reps), ("datasets", datasets)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="afr-bench-dask-") as tmp:
        cpu = unit_cpu(load_experiment(config, overrides, Path(tmp) / "cpu"), rounds)
        scale = scaling(config, overrides, workers, Path(tmp))
    return {
        "config": config,
        "datasets": datasets,
        "reps": reps,
        "cores": os.cpu_count(),
        "unit_cpu": cpu,
        "scaling": scale,
        "load_average": [round(load, 2), scale["load_average"][1]],
    }
