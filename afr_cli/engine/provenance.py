"""Where a unit ran: the host, and the batch job on a cluster, recorded in the store beside it.

A unit computed in a SLURM, PBS, SGE or LSF job reads ``<host> job <id>`` (the job id from the
variable each scheduler sets in its jobs); elsewhere just the host. ``afr status`` counts the
stored units by it, so a run spread over jobs shows where its units went. It never changes a
computed value: it is added to the finished record.
"""

from __future__ import annotations

import os
import platform

from afr_cli.store import UnitRecord

JOB_ID_VARIABLES = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID")  # SLURM, PBS, LSF, SGE


def where_this_runs() -> str:
    """This process's host, with its batch job's id when it runs in one."""
    job = next((os.environ[v] for v in JOB_ID_VARIABLES if os.environ.get(v)), None)
    host = platform.node()
    return f"{host} job {job}" if job else host


def ran_here(unit: UnitRecord) -> UnitRecord:
    """The unit, recorded as run in this process (its host, and its job on a cluster)."""
    unit.ran_on = where_this_runs()
    return unit
