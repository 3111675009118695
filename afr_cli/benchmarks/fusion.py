"""Fitting each distinct forest once across experiments, two ways, against today's path, in one
run: CPU seconds (process time in the workers), forest fits and reuses, peak memory (the workers'
largest resident set) and whether every stored value came out the same.

- ``today``: each experiment alone, one after another (its own tasks: ``unit_tasks``, every
  other speedup on);
- ``fused``: plan-level fusion (``unit_groups.fuse_tasks``): one task = the units of several
  experiments sharing (dataset, repetition, forest), computed in one worker with one SharedWork;
- ``cache``: today's tasks, ordered so that tasks fitting the same forests are next to each other,
  each worker holding a content-addressed ``ForestCache`` bounded in bytes.

Each (path, workers) runs in fresh worker processes (spawned, so their resident sets start
clean); CPU is summed over the tasks, each timed in its worker with ``time.process_time``.
"""

from __future__ import annotations

import resource
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from afr_cli.benchmarks.floor import largest_move
from afr_cli.config.experiment import load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.forest_cache import ForestCache
from afr_cli.engine.shared_work import Speedups
from afr_cli.engine.tasks import FusedTask, fuse_tasks, run_task, share_signature, shared_work_fused, unit_tasks

RF_GROUP = (
    "configs/abrf_rf.yaml",
    "configs/satrf_rf.yaml",
    "configs/larf_rf.yaml",
    "configs/dm_soft.yaml",
    "configs/larf_leave_self_out.yaml",
)
PATHS = ("today", "fused", "cache")

_cache: ForestCache | None = None  # the worker's, under the ``cache`` path


def _start_worker(cache_bytes: int | None) -> None:
    global _cache
    _cache = ForestCache(cache_bytes) if cache_bytes else None


def _work(experiments: list, task: FusedTask, data: list, speedups: Speedups) -> dict:
    """One task in a worker: its records, process time, forests fitted and reused, and the
    worker's peak resident set so far (KiB)."""
    c0, w0 = time.process_time(), time.perf_counter()
    shared = shared_work_fused(experiments, task, speedups, _cache)
    records = [
        (i, unit) for i, part in task.parts for unit in run_task(experiments[i], part, *data[i], speedups, None, shared)
    ]
    return {
        "records": records,
        "cpu": time.process_time() - c0,
        "wall": time.perf_counter() - w0,
        "fits": shared.fits,
        "reuses": shared.reuses,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "cache_peak": _cache.peak_bytes if _cache is not None else 0,
    }


def _tasks(path: str, experiments: list, todos: list[list[tuple]]) -> list[FusedTask]:
    unfused = Speedups(fuse=False)
    own = [unit_tasks(e, todo, unfused) for e, todo in zip(experiments, todos)]
    if path == "fused":
        return fuse_tasks(experiments, own, Speedups())
    tasks = fuse_tasks(experiments, own, unfused)  # one part each, experiment after experiment
    if path == "cache":
        first: dict[tuple, int] = {}
        for n, task in enumerate(tasks):
            i, part = task.parts[0]
            first.setdefault(share_signature(experiments[i], part), n)
        tasks.sort(key=lambda t: first[share_signature(experiments[t.parts[0][0]], t.parts[0][1])])
    return tasks


def _measure(path: str, workers: int, experiments: list, todos: list, data: dict, cache_bytes: int) -> dict:
    tasks = _tasks(path, experiments, todos)
    speedups = Speedups(fuse=path == "fused")
    w0 = time.perf_counter()
    with ProcessPoolExecutor(
        workers,
        mp_context=get_context("spawn"),
        initializer=_start_worker,
        initargs=(cache_bytes if path == "cache" else None,),
    ) as pool:
        futures = []
        for task in tasks:
            dataset = task.parts[0][1].dataset
            futures.append(
                pool.submit(
                    _work,
                    experiments,
                    task,
                    [data[(i, dataset)] if (i, dataset) in data else None for i in range(len(experiments))],
                    speedups,
                )
            )
        done = [f.result() for f in futures]
    fits, reuses = sum(d["fits"] for d in done), sum(d["reuses"] for d in done)
    return {
        "path": path,
        "workers": workers,
        "tasks": len(tasks),
        "cpu_s": round(sum(d["cpu"] for d in done), 3),
        "wall_s": round(time.perf_counter() - w0, 3),
        "fits": fits,
        "reuses": reuses,
        "hit_rate": round(reuses / max(1, fits + reuses), 3),
        "peak_rss_mib": round(max(d["maxrss_kib"] for d in done) / 1024, 1),
        "cache_peak_mib": round(max(d["cache_peak"] for d in done) / 2**20, 1),
        "records": sorted(
            (r for d in done for r in d["records"]),
            key=lambda r: (r[0], r[1].dataset, r[1].base, r[1].rep, sorted(r[1].axes.items())),
        ),
    }


def run(
    configs: list[str] | None = None,
    datasets: list[str] | None = None,
    reps: int = 1,
    workers: tuple[int, ...] = (1, 2),
    cache_mb: int = 512,
) -> dict:
    """Every path at every worker count on the units of ``configs`` (default: the RF group) at
    ``datasets`` (those each config has) and repetitions 0..reps-1; each path's CPU against
    today's at the same worker count, as a ratio measured in this run."""
    experiments, todos, data = [], [], {}
    for config in configs or RF_GROUP:
        exp = load_experiment(config, [f"protocol.reps={reps}"])
        chosen = [d for d in exp.datasets if datasets is None or d in datasets]
        if not chosen:
            continue
        i = len(experiments)
        experiments.append(exp)
        todos.append(
            [
                (d, b, a, r)
                for d in chosen
                for b in range(len(exp.bases))
                for a in exp.protocol.axes()
                for r in range(reps)
            ]
        )
        for d in chosen:
            data[(i, d)] = load_one(exp, d)
    rows = []
    for n in workers:
        today = None
        for path in PATHS:
            row = _measure(path, n, experiments, todos, data, cache_mb * 2**20)
            records = row.pop("records")
            if path == "today":
                today, today_cpu = records, row["cpu_s"]
            move, identical = largest_move([u for _, u in today], [u for _, u in records])
            row.update(
                ratio=round(today_cpu / max(row["cpu_s"], 1e-9), 3),
                identical=identical,
                largest_move=move,
                units=len(records),
            )
            rows.append(row)
    return {
        "configs": [e.name for e in experiments],
        "datasets": sorted({d for todo in todos for d, *_ in todo}),
        "reps": reps,
        "cache_mb": cache_mb,
        "rows": rows,
    }
