"""Units in batch jobs (``--cluster FILE``): a dask-jobqueue cluster afr starts, sizes and cancels.

afr's own process holds the Dask scheduler; each batch job (SLURM, PBS, SGE, LSF) runs Dask
workers that connect back to it and compute units, which come back to afr, the only writer of
the store, as with ``--scheduler`` (``DaskUnits``, whose task window and result loop this reuses).

- Jobs never outlive afr: every job carries the name ``afr-units-<afr's pid>``; leaving the
  context (the end of the run, Ctrl-C, SIGTERM, a failure) closes the cluster, which cancels each
  job it submitted, and then cancels by that name anything left (a job submitted as afr was
  stopped). A job of an earlier run that is still queued (afr killed outright) is named on
  stderr at the next start, with the command that cancels it.
- The cluster is sized to the tasks: Dask's adaptive scaling between 0 and the most jobs the
  file allows (never more jobs than tasks), retiring idle workers as the tasks run out. Every
  task is taken to be long until one has finished (``default-task-durations``), so the first
  tasks ask for every job at once rather than one.
- A job killed mid-run (scancel, walltime, preemption) loses its worker: the scheduler gives its
  tasks to another worker, and adaptive scaling submits a new job while tasks wait. A unit is
  stored once, when its result reaches afr, so none is lost or stored twice.
- Before the cluster starts, a probe job (SLURM) runs the file's ``prepare`` lines and its
  ``python`` and reports what it found, so a job that cannot import afr, or whose packages differ
  from afr's (the rows would differ), is one line before any worker job waits in the queue.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from afr_cli.config.cluster_file import KEYS, ClusterSpec
from afr_cli.core.quiet_interrupt import interrupts_ignored
from afr_cli.engine.dask_backend import DaskUnits
from afr_cli.errors import AfrInputError

JOB_PREFIX = "afr-units"
# Packages whose versions change computed bits: a job's Python must have afr's.
SAME_VERSIONS = ("numpy", "scipy", "scikit-learn", "cvxpy", "clarabel", "ecos", "osqp", "numba", "distributed")
PROBE = """
import json, os, sys
from importlib import metadata
found = {"python": sys.executable}
try:
    import afr_cli, distributed
    found["afr_cli"] = os.path.dirname(os.path.abspath(afr_cli.__file__))
    found["versions"] = {}
    for name in NAMES:
        try:
            found["versions"][name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found["versions"][name] = None
except Exception as err:
    found["error"] = f"{type(err).__name__}: {err}"
print("AFR-PROBE " + json.dumps(found))
"""


def job_name(pid: int | None = None) -> str:
    """The name every job of this afr process carries (its pid: two runs never share one)."""
    return f"{JOB_PREFIX}-{os.getpid() if pid is None else pid}"


def _walltime(spec: ClusterSpec) -> str:
    """The walltime as the scheduler writes it: SLURM takes D-HH:MM:SS, PBS and SGE HH:MM:SS, LSF HH:MM."""
    if spec.scheduler == "slurm":
        return spec.walltime
    days, _, clock = spec.walltime.rpartition("-")
    h, m, s = (int(x) for x in clock.split(":"))
    h += 24 * int(days or 0)
    return f"{h:02d}:{m:02d}" if spec.scheduler == "lsf" else f"{h:02d}:{m:02d}:{s:02d}"


def jobqueue_options(spec: ClusterSpec, name: str) -> dict[str, Any]:
    """The dask-jobqueue keyword arguments of the file's jobs: one worker process per core, each
    on one thread (a unit runs its BLAS on one thread anyway), named ``name``."""
    options: dict[str, Any] = {
        "cores": spec.cores,
        "processes": spec.cores,
        "memory": spec.memory,
        "walltime": _walltime(spec),
        "job_name": name,
        "python": spec.python,
        "job_extra_directives": list(spec.directives),
        "job_script_prologue": list(spec.prepare),
        "log_directory": str(Path(spec.logs).absolute()),
    }
    if spec.queue:
        options["queue"] = spec.queue
    if spec.account:
        options["account" if spec.scheduler in ("slurm", "pbs") else "project"] = spec.account
    if spec.interface:
        options["interface"] = spec.interface
    return options


def _jobqueue():
    """dask_jobqueue, imported with this process's Ctrl-C handling kept: importing it sets a SIGINT
    handler that calls ``sys.exit()`` (for its SlurmRunner), which would turn afr's Ctrl-C into a
    bare exit and skip the interrupted run's count."""
    previous = signal.getsignal(signal.SIGINT)
    try:
        import dask_jobqueue
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)
    return dask_jobqueue


def _job_class(scheduler: str):
    dask_jobqueue = _jobqueue()
    return {
        "slurm": dask_jobqueue.SLURMCluster,
        "pbs": dask_jobqueue.PBSCluster,
        "sge": dask_jobqueue.SGECluster,
        "lsf": dask_jobqueue.LSFCluster,
    }[scheduler]


def job_script(spec: ClusterSpec) -> str:
    """The script each job is submitted with (``afr validate --cluster``), the scheduler's address
    left as a placeholder: it is known once afr starts the cluster."""
    cluster_class = _job_class(spec.scheduler)
    logs = Path(spec.logs).absolute()
    made = not logs.exists()  # dask-jobqueue makes the log directory: a script alone leaves none behind
    try:
        job = cluster_class.job_cls(
            scheduler="tcp://<afr's address>:8786", name="<worker>", **jobqueue_options(spec, job_name())
        )
        return job.job_script()
    finally:
        if made and logs.is_dir() and not any(logs.iterdir()):
            logs.rmdir()


def earlier_jobs(spec: ClusterSpec) -> list[tuple[str, str, str]]:
    """(job id, name, state) of every queued or running job of an earlier afr run (SLURM's
    ``squeue``; the other schedulers are not listed)."""
    if spec.scheduler != "slurm":
        return []
    try:
        out = subprocess.run(
            ["squeue", "--me", "-h", "-o", "%i|%j|%T"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    jobs = [tuple(line.split("|", 2)) for line in out.splitlines() if line.count("|") == 2]
    mine = job_name()
    return [
        (i, n, s) for i, n, s in jobs if n.startswith(f"{JOB_PREFIX}-") and n != mine and not n.startswith(f"{mine}-")
    ]


def earlier_jobs_warning(jobs: list[tuple[str, str, str]]) -> str:
    """One line naming the jobs an earlier afr run left queued, and how to cancel them."""
    named = ", ".join(f"{i} ({n}, {s.lower()})" for i, n, s in jobs)
    ids = " ".join(i for i, _, _ in jobs)
    return (
        f"warning: {len(jobs)} job{'s' * (len(jobs) != 1)} of an earlier afr run still queued: {named}; "
        f"this run does not use them; cancel with: scancel {ids}"
    )


def probe(spec: ClusterSpec, versions: dict[str, str | None] | None = None) -> dict:
    """Run one short job with the file's directives, ``prepare`` lines and ``python``, and check
    that it imports afr with afr's package versions; return what it found. Any problem is one
    AfrInputError naming the file, the key and the path the job could not see or run. SLURM only
    (``srun``, its output read here); elsewhere the ``python`` path is checked on this machine."""
    if spec.scheduler != "slurm":
        if shutil.which(spec.python) is None:  # a path, or a name on this PATH
            raise AfrInputError(f"{spec.source}: python: {spec.python} cannot be run; allowed: {KEYS['python']}")
        return {}
    code = PROBE.replace("NAMES", repr(SAME_VERSIONS))
    directives = [
        line.removeprefix("#SBATCH").strip() for line in job_script(spec).splitlines() if line.startswith("#SBATCH")
    ]
    flags = [f for d in directives if not d.startswith(("-J", "-e", "-o")) for f in shlex.split(d)]
    body = "\n".join([*spec.prepare, f"{shlex.quote(spec.python)} -c {shlex.quote(code)}"])
    command = ["srun", "--quiet", "-J", f"{job_name()}-probe", *flags, "bash", "-c", body]
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as err:
        raise AfrInputError(f"{spec.source}: scheduler: cannot submit a SLURM job ({err.strerror}: srun)") from None
    try:
        text, _ = proc.communicate()
    finally:
        if proc.poll() is None:  # interrupted while the probe waited or ran: srun cancels it on SIGTERM
            proc.terminate()
            proc.wait()
    line = next((x for x in text.splitlines() if x.startswith("AFR-PROBE ")), None)
    if line is None:
        said = " ".join(text.split()[-30:]) or f"exit code {proc.returncode}"
        if "srun: error" in text and "Exited with exit code" not in text:  # never ran: refused or cancelled
            raise AfrInputError(f"{spec.source}: SLURM did not run the probe job ({said})")
        raise AfrInputError(
            f"{spec.source}: python: a job could not run {spec.python} ({said}); allowed: {KEYS['python']}"
        )
    found = json.loads(line.removeprefix("AFR-PROBE "))
    if "error" in found:
        raise AfrInputError(
            f"{spec.source}: python: {found['python']} in a job cannot import afr ({found['error']}); "
            "allowed: a Python with afr installed, reachable from the jobs (prepare: can activate it)"
        )
    ours = versions if versions is not None else _versions()
    for package, version in found["versions"].items():
        if ours.get(package) != version:
            raise AfrInputError(
                f"{spec.source}: python: {found['python']} in a job has {package} {version}, afr here has "
                f"{ours.get(package)}; the rows would differ: allowed: a Python with afr's package versions"
            )
    return found


def _versions() -> dict[str, str | None]:
    out = {}
    for package in SAME_VERSIONS:
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


def _cancel(command: list[str]) -> None:
    try:
        subprocess.run(command, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        pass


class ClusterUnits(DaskUnits):
    """Units in the batch jobs of a cluster file (a context manager: every job it submitted is
    cancelled on exit, however the run ends)."""

    def __init__(self, spec: ClusterSpec, warn: Callable[[str], None] | None = None) -> None:
        super().__init__(address=f"{spec.scheduler} jobs of {spec.source}")
        self.spec = spec
        self.name = job_name()
        self.cluster = None
        self.warn = warn or (lambda line: print(line, file=sys.stderr))
        self._watching = threading.Event()
        self.job_ids: set[str] = set()  # every job id this run submitted

    def __enter__(self) -> ClusterUnits:
        import dask
        from distributed import Client

        earlier = earlier_jobs(self.spec)
        if earlier:
            self.warn(earlier_jobs_warning(earlier))
        probe(self.spec)
        cluster_class = _job_class(self.spec.scheduler)
        try:
            with dask.config.set({"distributed.scheduler.default-task-durations": {"_on_worker": "1h"}}):
                # the scheduler's dashboard on a free port: two runs on one host never contend for 8787
                options = {**jobqueue_options(self.spec, self.name), "scheduler_options": {"dashboard_address": ":0"}}
                self.cluster = cluster_class(**options)
            self.client = Client(self.cluster, set_as_default=False)
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        """Cancel every job and stop the scheduler (a second Ctrl-C does not cut this short)."""
        with interrupts_ignored():
            self._watching.set()
            self._note_jobs()
            try:
                if self.client is not None:
                    self.client.close()
                if self.cluster is not None:
                    self.cluster.close()
            finally:
                self.client = self.cluster = None
                if self.spec.scheduler == "slurm":
                    _cancel(["scancel", f"--name={self.name}"])  # a job submitted as the run stopped

    def _note_jobs(self) -> None:
        if self.cluster is not None:
            self.job_ids |= {
                str(job.job_id) for job in list(self.cluster.workers.values()) if getattr(job, "job_id", None)
            }

    def threads(self) -> int:
        """The worker processes the file allows at once (every job's cores): tasks are submitted
        for all of them, so adaptive scaling sees the work that waits."""
        return self.spec.max_jobs * self.spec.cores

    def run_unordered(self, function: Callable[..., Any], calls: Iterable[tuple]) -> Iterator[Any]:
        """As ``DaskUnits.run_unordered``, on as many jobs as the tasks can use (never more than
        max_jobs), fewer as they run out."""
        calls = list(calls)
        most = max(1, min(self.spec.max_jobs, math.ceil(len(calls) / self.spec.cores)))
        self.cluster.adapt(minimum_jobs=0, maximum_jobs=most, interval="500ms", wait_count=4)
        for result in super().run_unordered(function, calls):
            self._note_jobs()
            yield result

    def jobs(self) -> tuple[int, int]:
        """(jobs pending, jobs running) now: a job runs once one of its workers has connected."""
        cluster = self.cluster
        if cluster is None:
            return 0, 0
        names = list(cluster.workers)
        connected = {str(w.get("name")) for w in self.client.scheduler_info(n_workers=-1)["workers"].values()}
        running = sum(1 for n in names if any(c == str(n) or c.startswith(f"{n}-") for c in connected))
        return len(names) - running, running

    def watch(self, bar: Any) -> None:
        """Show the jobs pending and running beside the bar's units, refreshed every second."""

        show = getattr(bar, "set_postfix_str", None)
        if show is None:  # a caller's bar that shows nothing
            return

        def refresh() -> None:
            while not self._watching.wait(1.0):
                try:
                    pending, running = self.jobs()
                except Exception:  # the cluster is closing
                    return
                show(f"jobs: {pending} pending, {running} running", refresh=True)

        threading.Thread(target=refresh, name="afr-jobs-bar", daemon=True).start()

    def where(self) -> str:
        """How many tasks ran, on how many workers, and how many jobs were submitted (a job killed
        mid-run and its replacement count twice)."""
        self._note_jobs()
        tasks = sum(self.ran_on.values())
        if not tasks:
            return ""
        jobs, workers = len(self.job_ids), len(self.ran_on)
        return (
            f"{tasks} task{'s' * (tasks != 1)} on {workers} Dask worker{'s' * (workers != 1)} in "
            f"{self.spec.scheduler.upper()} jobs ({jobs} submitted)"
        )
