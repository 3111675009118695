"""Which units one task computes together, and computing them.

A run's missing units (dataset, base index, axis point, rep) are grouped into tasks; each task
runs in one worker and returns every unit's record (each stored on its own, in its own
transaction, as before). Units go together when they share work that gives the same bytes:

- ``prefix``: under rep-index seeding every base's forest is seeded by the repetition alone, so
  bases of one kind differing only in tree count (configs/larf_trees.yaml: RF@100..RF@1000) fit
  one forest at the largest count and read the others as its first trees;
- ``shared_noise``: with noise on the query rows only (``protocol.noise_on: test``), the units of
  one split at different noise levels fit the same forest on the same training rows and solve the
  same training problems (the noise level never enters a seed).

Everything else is a task of one unit. Scheduling decides nothing: seeds depend only on names
and indices, so the same rows come out however units are grouped or distributed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afr_cli.config import Experiment
from afr_cli.protocol import run_unit
from afr_cli.shared_work import SharedWork, Speedups, prefix_family, tree_count
from afr_cli.store import UnitRecord


@dataclass(frozen=True)
class UnitTask:
    """Units of one dataset and repetition computed together: (base index, axis point) each."""

    dataset: str
    rep: int
    members: tuple[tuple[int, tuple[float, float]], ...]


def _base_group(exp: Experiment, b: int, speedups: Speedups):
    if speedups.prefix and exp.protocol.seeding == "rep-index":
        family = prefix_family(exp.bases[b])
        if family is not None:
            return ("prefix", family)
    return ("base", b)


def _axis_group(exp: Experiment, axis: tuple[float, float], speedups: Speedups):
    if speedups.shared_noise and exp.protocol.noise_on == "test":
        return ("fraction", axis[0])
    return ("point", axis)


def unit_tasks(exp: Experiment, todo: list[tuple], speedups: Speedups = Speedups()) -> list[UnitTask]:
    """The missing units ``todo`` (dataset, base index, axis point, rep) as tasks, in ``todo``'s
    order of first appearance; each unit in exactly one task."""
    groups: dict[tuple, list] = {}
    for d, b, a, r in todo:
        groups.setdefault((d, r, _base_group(exp, b, speedups), _axis_group(exp, a, speedups)), []).append((b, a))
    return [UnitTask(d, r, tuple(members)) for (d, r, _, _), members in groups.items()]


def shared_work_for(exp: Experiment, task: UnitTask, speedups: Speedups = Speedups()) -> SharedWork:
    """The SharedWork of a task: the largest tree count per prefix family of its bases (when more
    than one base of a family is in it), and shared training rows when several of its units use
    the same base (they differ only in query-side noise)."""
    counts: dict[tuple, list[int]] = {}
    for b, _ in task.members:
        family = prefix_family(exp.bases[b]) if speedups.prefix else None
        if family is not None:
            counts.setdefault(family, []).append(tree_count(exp.bases[b]))
    largest = {family: max(n) for family, n in counts.items() if len(set(n)) > 1}
    bases = [b for b, _ in task.members]
    return SharedWork(speedups, largest, share_rows=len(set(bases)) < len(bases))


def run_task(exp: Experiment, task: UnitTask, X: np.ndarray, y: np.ndarray, speedups: Speedups = Speedups(),
             on_unit=None) -> list[UnitRecord]:
    """Every unit of the task, in order, sharing its work. ``on_unit(base index, axis)``, when
    given, is called before each unit (the runner names the unit a failure belongs to)."""
    shared = shared_work_for(exp, task, speedups)
    records = []
    for b, axis in task.members:
        if on_unit is not None:
            on_unit(b, axis)
        fraction = axis[0] if exp.protocol.train_fractions else None  # no axis: the seeds of before
        records.append(run_unit(exp, task.dataset, exp.bases[b], task.rep, X, y, fraction, axis[1], shared))
    return records
