"""A cluster file: the batch jobs ``afr run --cluster FILE`` submits to run its units.

The file is YAML naming the batch scheduler (one of dask-jobqueue's: slurm, pbs, sge, lsf), the
queue (a SLURM partition), the account, each job's cores, memory and walltime, the most jobs at
once, extra directives for the job script, and the shell lines that prepare a job's environment
before its Dask worker starts (``module load ...``, activating the virtual environment). It is
checked here, key by key, as a config is: a bad value is one line naming the file, the key and
what is allowed. Nothing here imports Dask: the engine turns a ``ClusterSpec`` into a cluster
(afr_cli/engine/cluster_jobs.py).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from afr_cli.config.experiment import read_yaml_file
from afr_cli.errors import AfrInputError

SCHEDULERS = ("slurm", "pbs", "sge", "lsf")
MEMORY = re.compile(r"^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$")
WALLTIME = re.compile(r"^(\d+-)?\d{1,3}:[0-5]\d:[0-5]\d$")
# Every key of a cluster file, with what it allows (the error's "allowed:" and the docs).
KEYS: dict[str, str] = {
    "scheduler": f"one of {', '.join(SCHEDULERS)}",
    "queue": "the queue (a SLURM partition) jobs are submitted to, as text",
    "account": "the account jobs are charged to, as text",
    "cores": "an integer >= 1: cores of each job, one Dask worker process on each",
    "memory": "memory of each job, e.g. 4GB or 1500MB",
    "walltime": "each job's time limit, HH:MM:SS or D-HH:MM:SS",
    "max_jobs": "an integer >= 1: the most jobs queued or running at once",
    "directives": "a list of extra job-script directives, e.g. ['--qos=short'] (the part after #SBATCH)",
    "prepare": "a list of shell lines run before a job's worker starts, e.g. ['module load python/3.11']",
    "python": "the Python a job runs afr with (a path the job can see; default: the one running afr)",
    "interface": "the network interface jobs and afr talk over, e.g. ib0 (default: the host's address)",
    "logs": "the directory each job's output goes to, one both afr and the jobs see (default: afr-jobs)",
}


@dataclass(frozen=True)
class ClusterSpec:
    """A checked cluster file: what each batch job is and how many may run at once."""

    source: str
    scheduler: str
    queue: str | None = None
    account: str | None = None
    cores: int = 1
    memory: str = "2GB"
    walltime: str = "01:00:00"
    max_jobs: int = 2
    directives: tuple[str, ...] = ()
    prepare: tuple[str, ...] = ()
    python: str = field(default_factory=lambda: sys.executable)
    interface: str | None = None
    logs: str = "afr-jobs"


def load_cluster_file(path: str | Path) -> ClusterSpec:
    """Read and check a cluster file; any problem is one AfrInputError naming the file and key."""
    src = str(path)
    raw = read_yaml_file(path, "cluster")
    if not isinstance(raw, dict):
        raise AfrInputError(f"{src}: must be a mapping with keys {', '.join(KEYS)}")
    for key in raw:
        if key not in KEYS:
            raise AfrInputError(f"{src}: {key!r} is not a cluster key; allowed: {', '.join(KEYS)}")
    if "scheduler" not in raw:
        raise AfrInputError(f"{src}: scheduler: missing; allowed: {KEYS['scheduler']}")
    values: dict[str, Any] = {"source": src}
    for key, value in raw.items():
        values[key] = _checked(src, key, value)
    return ClusterSpec(**values)


def _checked(src: str, key: str, value: Any) -> Any:
    """One key's value, checked (lists as tuples); a bad one is one line naming the key."""
    bad = AfrInputError(f"{src}: {key}: {value!r} is not allowed; allowed: {KEYS[key]}")
    if key == "scheduler":
        if value not in SCHEDULERS:
            raise bad
    elif key in ("cores", "max_jobs"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad
    elif key == "memory":
        if not isinstance(value, str) or not MEMORY.match(value.strip()):
            raise bad
        value = value.strip()
    elif key == "walltime":
        if not isinstance(value, str) or not WALLTIME.match(value.strip()):
            raise bad
        value = value.strip()
    elif key in ("directives", "prepare"):
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() and "\n" not in v for v in value):
            raise bad
        value = tuple(v.strip() for v in value)
    elif not isinstance(value, str) or not value.strip() or "\n" in value:
        raise bad  # queue, account, python, interface: one line of text
    return value
