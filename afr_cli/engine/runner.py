"""``afr run``: schedule the missing units of an experiment in parallel and store each as it ends.

Units run in loky worker processes through joblib (``--jobs``), or on every worker of a Dask
cluster through its client (``--backend dask``: afr_cli/engine/dask_backend.py, whatever the
cluster's size); the parent process is the only writer of the store, one transaction per finished
unit.
``run_experiments`` runs several experiments at once (``afr reproduce``): their units that fit
the same forests are computed together (``unit_groups.fuse_tasks``), and each unit still goes
to its own experiment's store, under that store's lock (taken in a fixed order).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from afr_cli.config.experiment import Experiment
from afr_cli.config.plugin_files import activate
from afr_cli.core.plugin_registry import exit_refused
from afr_cli.core.quiet_interrupt import (
    Terminated,
    cancelled_tasks_unannounced,
    interrupts_ignored,
    quiet_worker,
    start_quiet_resource_tracker,
)
from afr_cli.core.version import git_output
from afr_cli.engine.experiment_data import load_experiment_data
from afr_cli.engine.messages import complete_message, failed_message, interrupted_message, shell_line
from afr_cli.engine.plugin_faults import UnitFailed, unit_failure, worker_died
from afr_cli.engine.preflight import check_runnable
from afr_cli.engine.provenance import ran_here
from afr_cli.engine.shared_work import Speedups
from afr_cli.engine.tasks import FusedTask, fuse_tasks, run_fused_task, unit_tasks
from afr_cli.errors import AfrInputError, RunFailed, RunInterrupted
from afr_cli.store import STORE_FILE, ResultsStore, UnitRecord, axis_defaults, has_results, open_existing
from afr_cli.store.export import export_store, seed_store
from afr_cli.store.faults import storage_faults
from afr_cli.store.lock import StoreLock

BACKENDS = ("loky", "dask")


@dataclass(kw_only=True)
class RunOptions:
    """How a run is carried out (never what it computes: that is the experiment's config).

    Keyword-only, so a call reads ``RunOptions(jobs=1, progress=False)``, never a row of bare
    booleans; the backend and its scheduler are checked once, here, when the options are made
    (``afr run``, ``afr reproduce`` and every caller of the runner meet the same check)."""

    jobs: int = -1
    backend: str = "loky"
    scheduler: str | None = None
    fresh: bool = False
    progress: bool = True
    confirm: Callable[[str], bool] | None = None  # asked before --fresh deletes results
    # The user's `afr run` command as given, without --fresh/--yes (options.given_command): when
    # given, a complete store says how to extend it, and an interrupted or failed run how to resume.
    command: list[str] | None = None
    # Whether the finished store is exported (results/<name>/export/, the committed form): the
    # caller decides, `afr run` for the stores a paper folder declares (or that have an export).
    export: bool = True
    # The whole command that resumes an interrupted run when it is not `command` (`afr reproduce`'s
    # own command line); None: `command`.
    resume: list[str] | None = None
    # A progress bar owned by the caller (`afr reproduce`: one bar over several experiments);
    # None: each run draws its own.
    bar: Any = None
    # Which shared-work paths the run takes (shared_work.Speedups; all on, every one bit-identical).
    speedups: Speedups = field(default_factory=Speedups)
    # A checked cluster file (config.cluster_file.ClusterSpec): the units run in its batch jobs.
    cluster: Any = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise AfrInputError(f"--backend: {self.backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
        if self.backend == "dask" and not self.scheduler:
            raise AfrInputError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
        if self.cluster is not None and self.backend == "dask":
            raise AfrInputError("--cluster: not with --backend dask; the cluster file's jobs are the Dask cluster")


def manifest_for(exp: Experiment, data_identity: dict[str, dict] | None = None) -> dict:
    """Config, its hash, package versions and git commit: enough to repeat the run; and, under
    ``data``, each file or loader dataset's identity (sha256, rows, columns), so a changed file
    cannot extend the store (registered datasets are fixed by the registry and add nothing)."""
    versions = {}
    for pkg in (
        "numpy",
        "scipy",
        "scikit-learn",
        "cvxpy",
        "ecos",
        "clarabel",
        "osqp",
        "daqp",
        "piqp",
        "pandas",
        "joblib",
    ):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    versions["python"] = platform.python_version()
    manifest = {
        "experiment": exp.name,
        "config": exp.raw,
        "config_source": exp.source,
        "config_hash": exp.unit_hash(),
        "versions": versions,
        "git_commit": _git_commit(),
    }
    if data_identity:
        manifest["data"] = dict(data_identity)
    return manifest


def _git_commit() -> str | None:
    return git_output("rev-parse", "HEAD")


def _code_modified() -> bool | None:
    """Whether the package's source differs from the recorded commit (uncommitted changes)."""
    out = git_output("status", "--porcelain", "--", "afr_cli")
    return None if out is None else bool(out)


def run_history(previous: dict, manifest: dict, reps: int, stored: int, target: dict | None = None) -> list[dict]:
    """The store's list of runs with this one appended: when, which commit and package versions,
    how many repetitions were asked for and how many units were already stored, and the run's
    ``target`` (``run_target``: its units, process and workers, for ``afr status``). A store extended
    over several sessions keeps the provenance of every part (the manifest's own git_commit and
    versions are the latest run's)."""
    runs = list(previous.get("runs", []))
    if previous and not runs:  # a store from before run histories: keep what its manifest said
        runs.append(
            {
                "git_commit": previous.get("git_commit"),
                "versions": previous.get("versions"),
                "note": "recorded before run histories; this run's units may span several runs",
            }
        )
    runs.append(
        {
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "git_commit": manifest["git_commit"],
            "code_modified": _code_modified(),
            "versions": manifest["versions"],
            "reps": reps,
            "units_stored_before": stored,
            **({"target": target} if target else {}),
        }
    )
    return runs


def run_target(exp: Experiment, jobs: int, command: list[str] | None = None) -> dict:
    """What a run sets out to store (datasets x bases x repetitions 0..reps-1) and who runs it
    (host, process id, workers, and the command that resumes it), recorded at its start so
    ``afr status`` can show its progress and an ETA while it runs, and how to resume it."""
    return {
        **({"command": shell_line(command)} if command else {}),
        "datasets": list(exp.datasets),
        "bases": [b.id for b in exp.bases],
        "reps": exp.protocol.reps,
        "units": len(exp.datasets) * len(exp.bases) * len(exp.protocol.axes()) * exp.protocol.reps,
        "host": platform.node(),
        "pid": os.getpid(),
        "workers": effective_n_jobs(jobs),
    }


def prepare_store(
    exp: Experiment,
    fresh: bool,
    confirm: Callable[[str], bool] | None = None,
    jobs: int = 1,
    data_identity: dict[str, dict] | None = None,
    lock: StoreLock | None = None,
    command: list[str] | None = None,
) -> tuple[ResultsStore, list[tuple]]:
    """Open the experiment's store and list its missing units (dataset, base index, (train fraction,
    noise level), rep); refuse
    a store made by a different config unless ``fresh``. A missing store is seeded from the
    committed export, so a fresh clone extends an experiment from where it stands. ``fresh`` on
    results that exist needs ``confirm`` to say yes. The manifest is written, with this run added
    to its history, only when there is something to run: a no-op run leaves it untouched, and
    every refusal comes before anything is written; ``command``, the user's command line, is
    recorded in the run's target (``afr status`` prints it to resume). With ``lock``, the store's write lock is taken
    before writing and the missing units are listed again under it (another run may have stored
    some meanwhile), so no unit is computed twice."""
    store = ResultsStore(exp.results)
    asked = fresh
    fresh, previous, done, todo = _missing_units(exp, asked, confirm, data_identity)
    if todo:
        store.check_writable()
        if lock is not None:
            lock.acquire()  # listed again under the lock; --fresh was confirmed already
            fresh, previous, done, todo = _missing_units(
                exp, asked, (lambda question: True) if asked else confirm, data_identity
            )
    if todo:
        if fresh:
            store.delete()
        elif previous and not store.exists():
            seed_store(exp.results)
        known = {**(previous.get("data") or {}), **(data_identity or {})}  # datasets of earlier runs stay
        manifest = manifest_for(exp, known)
        manifest["runs"] = run_history(previous, manifest, exp.protocol.reps, len(done), run_target(exp, jobs, command))
        with storage_faults(store.path, "create the results store"):
            store.create(manifest)
    return store, todo


def _stored_point(point: tuple[float, ...], manifest: dict) -> tuple[float, ...]:
    """A config's axis point (train_fraction, noise_eta) as the store keys it: every declared axis
    in order, the ones the config does not vary at their defaults, rounded as keys are compared."""
    return tuple(round(v, 9) for v in (*point, *axis_defaults(manifest)[len(point) :]))


def _holds_no_unit(held, manifest: dict, exp: Experiment) -> bool:
    """A store made by another config that holds no unit (a first run that failed): it is started
    afresh, since it must never block the corrected config's run."""
    return (
        bool(manifest)
        and manifest.get("config_hash") != exp.unit_hash()
        and held.source == "store"
        and not held.done_unit_keys()
    )


def missing_units(exp: Experiment, held, data_identity: dict[str, dict] | None = None) -> tuple[set, list[tuple]]:
    """The units ``held`` (a store or its export, or None) already has, and the experiment's units
    it lacks (dataset, base index, axis point, rep); a store made by a different config, or whose
    file datasets changed, is refused. Reads only: ``afr reproduce --plan`` asks this of every experiment."""
    manifest = held.manifest() if held is not None else {}
    if _holds_no_unit(held, manifest, exp):
        return set(), _todo(exp, set(), {})
    if manifest:
        old = manifest.get("config_hash")
        if old != exp.unit_hash():
            raise AfrInputError(
                f"{exp.source}: the store {held.path} was made by a different config (hash {old} != "
                f"{exp.unit_hash()}); use --fresh --yes to discard it or --out DIR for a new store"
            )
        _check_same_data(exp, held, manifest, data_identity or {})
    done = (
        {(d, b, *(round(v, 9) for v in point), r) for d, b, *point, r in held.done_unit_keys()} if manifest else set()
    )
    return done, _todo(exp, done, manifest)


def _todo(exp: Experiment, done: set, manifest: dict) -> list[tuple]:
    """The experiment's units (dataset, base index, axis point, rep) whose key is not in ``done``."""
    return [
        (d, b, a, r)
        for d in exp.datasets
        for b in range(len(exp.bases))
        for a in exp.protocol.axes()
        for r in range(exp.protocol.reps)
        if (d, exp.bases[b].id, *_stored_point(a, manifest), r) not in done
    ]


def _check_same_data(exp: Experiment, held, previous: dict, data_identity: dict[str, dict]) -> None:
    """Refuse to extend a store whose file or loader dataset now holds other data: another file
    (its sha256), or the same file read into other rows or columns (a changed ``drop:``, ``missing:``,
    ``encode:`` or ``target:`` in the config's entry, which the config hash leaves out with the dataset list)."""
    recorded = previous.get("data") or {}
    for name, now in data_identity.items():
        before = recorded.get(name) or {}
        for key in ("sha256", "rows", "columns", "target", "rows_dropped", "encode"):
            old, new = before.get(key), now.get(key)
            if old is None or new is None or old == new:
                continue
            source = exp.dataset_sources[name]
            raise AfrInputError(
                f"{source.where}: dataset {name} changed since the store {held.path} was made ({key} {old} != "
                f"{new}); restore the data and its entry, or use --fresh --yes to discard the store or --out DIR "
                "for a new store"
            )


def _missing_units(
    exp: Experiment, fresh: bool, confirm: Callable[[str], bool] | None, data_identity: dict[str, dict] | None
) -> tuple[bool, dict, set, list[tuple]]:
    """(fresh, the held manifest, the stored unit keys, the missing units) of the experiment's store;
    a store holding no unit is started afresh whatever config made it."""
    held = _held(exp, fresh)
    if fresh and held is not None:
        _confirm_fresh(held, confirm)
    previous = held.manifest() if held is not None and not fresh else {}
    if _holds_no_unit(held, previous, exp):
        return True, {}, set(), _todo(exp, set(), {})
    done, todo = missing_units(exp, held if previous else None, data_identity)
    return fresh, previous, done, todo


def _held(exp: Experiment, fresh: bool):
    """The experiment's store (else its export) for reading, or None; a damaged store is an error,
    except for --fresh, which may discard it (once confirmed)."""
    if not has_results(exp.results):
        return None
    try:
        return open_existing(exp.results)
    except AfrInputError:
        if not fresh:
            raise
        return ResultsStore(exp.results)


def _confirm_fresh(held, confirm: Callable[[str], bool] | None) -> None:
    """--fresh deletes results: only with the user's yes (--yes, or the prompt in a terminal)."""
    try:
        units = len(held.done_unit_keys())
    except AfrInputError:
        units, count = None, "an unreadable store"
    if units == 0:
        return
    if units is not None:
        count = f"{units} unit{'s' * (units != 1)} of results"
    question = f"{held.directory} holds {count}; delete them and start afresh?"
    if confirm is None:
        raise AfrInputError(
            f"{held.directory}: holds {count}; --fresh would delete them; add --yes to "
            f"confirm, or use --out DIR for a new store"
        )
    if not confirm(question):
        raise AfrInputError(f"{held.directory}: --fresh not confirmed; nothing was changed")


@dataclass
class _Running:
    """One experiment of a run: its store, missing units and loaded data."""

    exp: Experiment
    store: ResultsStore
    todo: list[tuple]
    data: dict
    total: int
    exported: bool = False


def _run_task(
    indices: list[int],
    experiments: list[Experiment],
    task: FusedTask,
    data: list[tuple[np.ndarray, np.ndarray]],
    speedups: Speedups,
) -> list[tuple[int, UnitRecord]]:
    """The units of one task (``afr_cli.engine.tasks``: units sharing a forest or solves run together,
    of one experiment or of several), as (``indices[i]``, record) for part experiment i.

    BLAS and OpenMP run on one thread inside a unit, wherever it runs (in this process with
    ``--jobs 1``, a loky worker, a Dask worker): a matrix product summed by more threads rounds
    differently, and an ill-conditioned problem carries that to the scores, so the rows would
    depend on the number of workers (joblib limits a loky worker's threads to cores / workers)."""
    for exp in experiments:
        activate(exp.plugins, exp.source)  # a worker imports the config's plugins once (from their source text)
    current = [(task.parts[0][0], task.parts[0][1].members[0][0])]

    def starting(i: int, base_index: int, axis) -> None:
        current[0] = (i, base_index)

    try:
        with exit_refused(), threadpool_limits(limits=1):  # a plugin's exit attempt, even os._exit, is its failure
            units = [(indices[i], unit) for i, unit in run_fused_task(experiments, task, data, speedups, starting)]
            return [(i, ran_here(unit)) for i, unit in units]
    except (Exception, SystemExit) as err:  # a plugin's failure is the unit's, in one line; afr's keeps its traceback
        i, b = current[0]
        part = next(t for j, t in task.parts if j == i)
        failure = unit_failure(experiments[i], f"{part.dataset} / {experiments[i].bases[b].id} / rep {part.rep}", err)
        if failure is None:
            raise
        failure.experiment = indices[i]  # pickled with the exception: the parent records it in that store
        raise failure from None


def run_experiment(exp: Experiment, options: RunOptions, echo=print) -> ResultsStore:
    """Run every unit not yet in the store; return the store."""
    return run_experiments([exp], options, echo)[0]


def run_experiments(experiments: list[Experiment], options: RunOptions, echo=print) -> list[ResultsStore]:
    """Run every unit not yet in each experiment's store (one store per experiment, each named
    once), units that fit the same forests together (``options.speedups.fuse``); return the
    stores, in order. Every input is checked and every dataset loaded before any store is
    touched; the stores' locks are taken in the order of their paths and all released on exit.
    A Dask scheduler is reached before any store is touched too (one that cannot be is one line)."""
    loaded = []
    for exp in experiments:
        check_runnable(exp)  # what the run would trip on, before anything is loaded or written
        data, identity = load_experiment_data(exp)  # read and checked before the store is touched
        check_runnable(exp, {name: len(y) for name, (_, y) in data.items()})
        loaded.append((data, identity))
    with _workers(options) as workers, ExitStack() as locks:
        running: dict[int, _Running] = {}
        order = sorted(range(len(experiments)), key=lambda i: str((experiments[i].results / STORE_FILE).resolve()))
        for i in order:  # a fixed order: two runs over overlapping stores cannot take them crosswise
            exp = experiments[i]
            lock = locks.enter_context(StoreLock(exp.results / STORE_FILE))
            # the run's target names its workers: loky's for --jobs, or the Dask cluster's threads
            store, todo = prepare_store(
                exp,
                options.fresh,
                options.confirm,
                workers.threads(),
                loaded[i][1],
                lock,
                options.resume or options.command,
            )
            total = len(exp.datasets) * len(exp.bases) * len(exp.protocol.axes()) * exp.protocol.reps
            running[i] = _Running(exp, store, todo, loaded[i][0], total)
        runs = [running[i] for i in range(len(experiments))]
        for r in runs:
            _announce(r, options, echo)
        _run_locked([r for r in runs if r.todo], options, echo, workers)
        return [r.store for r in runs]


def _announce(r: _Running, options: RunOptions, echo) -> None:
    """The experiment's units: stored, to run and where; a complete one says how to extend it."""
    exp, n_axes = r.exp, len(r.exp.protocol.axes())
    axes_text = f" x {n_axes} (train fraction, noise)" if n_axes > 1 else ""
    echo(
        f"{exp.name}: {r.total} units ({len(exp.datasets)} datasets x {len(exp.bases)} bases{axes_text} x "
        f"{exp.protocol.reps} reps), {r.total - len(r.todo)} already stored, {len(r.todo)} to run -> {r.store.path}"
    )
    if not r.todo and options.command:
        held = open_existing(exp.results)  # the store, or its committed export on a fresh clone
        echo(complete_message(exp, r.store.directory, held.done_units(), options.command))


def _run_locked(active: list[_Running], options: RunOptions, echo, workers) -> None:
    """Compute the missing units of ``active`` (each store locked and prepared), then export each
    store; an interrupt or a failed unit leaves every stored unit whole (complete stores exported)."""
    if not active:
        return
    try:
        _run_units(active, options, echo, workers)
    except KeyboardInterrupt as stop:
        with interrupts_ignored():  # a second Ctrl-C must not cut the count short
            counts = [(r, _stored_of_target(r)) for r in active]
            _export_complete(active, options, echo)
        short = [(r, stored) for r, stored in counts if stored < r.total]
        if short:
            r, stored = short[0]
            stopped = RunInterrupted(
                interrupted_message(r.store.directory, stored, r.total, options.resume or options.command)
            )
            if isinstance(stop, Terminated):
                stopped.exit_code = Terminated.exit_code
            raise stopped from None
    except UnitFailed as failed:
        r = active[getattr(failed, "experiment", 0)]
        failed.args = (failed_message(str(failed), options.resume or options.command),)
        with interrupts_ignored(), storage_faults(r.store.path, "record the failed unit"):
            _record_failure(r.store, str(failed))  # the line the user reads, its command included
        with interrupts_ignored():
            _export_complete([x for x in active if x is not r], options, echo)
        raise
    except RunFailed as failed:  # a storage fault or a worker that died: the same command resumes
        failed.args = (failed_message(str(failed), options.resume or options.command),)
        raise
    _export_complete(active, options, echo)


def _stored_of_target(r: _Running) -> int:
    """How many of the experiment's target units its store holds."""
    exp = r.exp
    return sum(
        1
        for d, b, *_, rep in r.store.done_unit_keys()
        if d in exp.datasets and rep < exp.protocol.reps and b in {x.id for x in exp.bases}
    )


def _export_complete(active: list[_Running], options: RunOptions, echo) -> None:
    """Export every store whose units are all stored (the committed form), once."""
    if not options.export:
        return
    for r in active:
        if r.exported or _stored_of_target(r) < r.total:
            continue
        with interrupts_ignored(), storage_faults(r.store.directory / "export", "write the export"):
            export_store(r.store.directory)  # every unit is stored: the export is written whole
        r.exported = True
        echo(f"exported -> {r.store.directory / 'export'} (the committed form of the store)")


def _run_units(active: list[_Running], options: RunOptions, echo, workers) -> None:
    """Compute the units on ``workers`` (``_workers``) and store each in its experiment's store as
    it arrives (one transaction per unit), under one progress bar."""
    remaining = Counter((i, d, r.exp.bases[b].id) for i, r in enumerate(active) for d, b, _, _ in r.todo)
    if options.backend == "loky" and options.jobs != 1:
        start_quiet_resource_tracker()
    total = sum(len(r.todo) for r in active)
    bar_context = nullcontext(options.bar) if options.bar is not None else _progress(total, options.progress)
    experiments = [r.exp for r in active]
    tasks = fuse_tasks(experiments, [unit_tasks(r.exp, r.todo, options.speedups) for r in active], options.speedups)
    with cancelled_tasks_unannounced(), bar_context as bar:
        getattr(workers, "watch", lambda bar: None)(bar)  # batch jobs: pending and running beside the units
        started = time.perf_counter()
        calls = ((*_task_args(active, task), options.speedups) for task in tasks)
        try:
            for units in workers.run_unordered(_run_task, calls):
                for i, unit in units:
                    store = active[i].store
                    with storage_faults(store.path, f"store unit {unit.dataset} / {unit.base} / rep {unit.rep}"):
                        store.write_unit(unit)
                    bar.update(1)
                    key = (i, unit.dataset, unit.base)
                    remaining[key] -= 1
                    if remaining[key] == 0:
                        bar.write(dataset_summary(store, active[i].exp, unit.dataset, unit.base))
        except Exception as err:
            # loky's and Dask's names for a worker process that ended abruptly (Dask's after the
            # task was retried on other workers as many times as the cluster allows)
            if type(err).__name__ not in ("TerminatedWorkerError", "KilledWorker"):
                raise
            where = active[0].store.path if len(active) == 1 else "afr reproduce"
            raise worker_died(str(where), experiments) from None
        where = workers.where()  # on Dask: how many tasks ran on which workers
        bar.write(f"done in {time.perf_counter() - started:.1f} s" + (f"; {where}" if where else ""))


def _task_args(active: list[_Running], task: FusedTask) -> tuple:
    """What a worker needs for one task: the global indices of its experiments, those experiments,
    the task renumbered over them, and each one's (X, y) of the task's dataset (nothing more is
    sent to the worker)."""
    indices = list(dict.fromkeys(i for i, _ in task.parts))
    local = FusedTask(tuple((indices.index(i), part) for i, part in task.parts))
    dataset = task.parts[0][1].dataset
    return indices, [active[i].exp for i in indices], local, [active[i].data[dataset] for i in indices]


def _record_failure(store: ResultsStore, message: str) -> None:
    """Add the failed unit to this run's entry of the manifest's run history (``afr status`` and a
    reader of the manifest see which unit failed and why; the unit itself is not stored)."""
    runs = list(store.manifest().get("runs") or [])
    if runs:
        runs[-1] = {**runs[-1], "failed": message}
        store.create({"runs": runs})


def dataset_summary(store: ResultsStore, exp: Experiment, dataset: str, base: str) -> str:
    """One line: mean test R^2 of every model on a dataset and base, over the stored reps."""
    df = store.frame("results")
    df = df[(df.dataset == dataset) & (df.base == base)]
    parts = [f"{m} {df[df.model == m].r2.mean():.3f}" for m in [m.id for m in exp.models] if (df.model == m).any()]
    return f"{dataset} / {base} ({df.rep.nunique()} reps): R2 " + ", ".join(parts)


class _LocalUnits:
    """Tasks in loky worker processes on this machine (``--jobs``; 1: in this process)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def run_unordered(self, function: Callable, calls) -> Any:
        """``function(*args)`` for each ``args`` of ``calls``; the results in the order they finish."""
        return Parallel(n_jobs=self.jobs, return_as="generator_unordered")(delayed(function)(*args) for args in calls)

    def threads(self) -> int:
        """The worker processes ``--jobs`` asks for (-1: one per core)."""
        return effective_n_jobs(self.jobs)

    def where(self) -> str:
        """Nothing to add: the tasks ran on this machine."""
        return ""


@contextmanager
def _workers(options: RunOptions) -> Iterator[Any]:
    """Where the tasks run: loky workers (``--jobs``), or every worker of a Dask cluster, whatever
    its size and ``--jobs`` (afr_cli/engine/dask_backend.py: not joblib's dask backend, which ran
    every task in this process on a one-worker cluster)."""
    if options.cluster is not None:
        from afr_cli.engine.cluster_jobs import ClusterUnits

        with ClusterUnits(options.cluster) as cluster:
            yield cluster
        return
    if options.backend != "dask":
        with parallel_config(backend="loky", initializer=quiet_worker):
            yield _LocalUnits(options.jobs)
        return
    try:
        from afr_cli.engine.dask_backend import DaskUnits
    except ImportError:
        raise AfrInputError("--backend dask needs the dask extra: pip install 'afr[dask]'") from None
    with DaskUnits(options.scheduler) as cluster:
        yield cluster


def _progress(total: int, enabled: bool):
    return tqdm(
        total=total,
        unit="unit",
        disable=not enabled,
        file=sys.stderr,
        dynamic_ncols=True,
        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} units [{elapsed}<{remaining}, {rate_fmt}{postfix}]",
    )
