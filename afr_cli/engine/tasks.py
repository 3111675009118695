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

Everything else is a task of one unit. Across experiments (``afr reproduce``, Speedups ``fuse``),
``fuse_tasks`` joins the tasks of several experiments that fit the same forests on the same
splits (same dataset and data, seeding, split and fold seeds, scaling, training-side noise and
base: ``share_signature``) into one ``FusedTask`` with one SharedWork: each forest of a
(repetition, fold) is fitted once and every experiment's units read it. The signature only
decides what runs together; what is reused is keyed by content (``shared_work.forest_key``), so a
signature that matched by accident would cost a fit, never change a row.

Scheduling decides nothing: seeds depend only on names
and indices, so the same rows come out however units are grouped or distributed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afr_cli.config.experiment import Experiment
from afr_cli.engine.forest_cache import ForestCache
from afr_cli.engine.protocol import REFIT, UnitSeeds, run_unit
from afr_cli.engine.shared_work import SharedWork, Speedups, forest_spec, prefix_family, tree_count
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
    return shared_work_fused([exp], FusedTask(((0, task),)), speedups)  # a task alone: a fused task of one part


def _largest_counts(bases: list, speedups: Speedups) -> dict[tuple, int]:
    """Per prefix family of ``bases`` whose tree counts differ, the largest count (the others are
    read as its prefixes); empty with ``prefix`` off."""
    counts: dict[tuple, set[int]] = {}
    for base in bases:
        family = prefix_family(base) if speedups.prefix else None
        if family is not None:
            counts.setdefault(family, set()).add(tree_count(base))
    return {family: max(n) for family, n in counts.items() if len(n) > 1}


def _repeats_a_base(task: UnitTask) -> bool:
    """Whether several units of the task use the same base (they differ only in query-side noise)."""
    bases = [b for b, _ in task.members]
    return len(set(bases)) < len(bases)


def run_task(
    exp: Experiment,
    task: UnitTask,
    X: np.ndarray,
    y: np.ndarray,
    speedups: Speedups = Speedups(),
    on_unit=None,
    shared: SharedWork | None = None,
) -> list[UnitRecord]:
    """Every unit of the task, in order, sharing its work. ``on_unit(base index, axis)``, when
    given, is called before each unit (the runner names the unit a failure belongs to);
    ``shared``: the SharedWork to use (a fused task's, or one holding a cache), else the task's own."""
    shared = shared if shared is not None else shared_work_for(exp, task, speedups)
    records = []
    for b, axis in task.members:
        if on_unit is not None:
            on_unit(b, axis)
        records.append(run_unit(exp, task.dataset, exp.bases[b], task.rep, X, y, _fraction(exp, axis), axis[1], shared))
    return records


def _fraction(exp: Experiment, axis: tuple[float, float]) -> float | None:
    return axis[0] if exp.protocol.train_fractions else None  # no axis: the seeds of before


@dataclass(frozen=True)
class FusedTask:
    """Tasks of several experiments (experiment index, its UnitTask) computed in one worker with
    one SharedWork; a task of one experiment is a FusedTask of one part."""

    parts: tuple[tuple[int, UnitTask], ...]


def data_key(exp: Experiment, dataset: str) -> tuple:
    """What a dataset's rows are, from the config: a registered set by its name, data seed and
    synthetic noise; a file or loader dataset by its source."""
    source = exp.dataset_sources.get(dataset)
    if source is not None:
        return ("source", dataset, repr(source))
    return ("registered", dataset, exp.data_seed, exp.synthetic_noise)


def share_signature(exp: Experiment, task: UnitTask, speedups: Speedups = Speedups()) -> tuple:
    """What determines the forests of a task's first unit: its data, the split and fold seeds,
    the folds, scaling, training-side noise, and per stage the forest's kind, parameters (without
    the tree count when read as a prefix) and seed. Tasks of different experiments with equal
    signatures fit the same forests (``fuse_tasks``)."""
    b, axis = task.members[0]
    base = exp.bases[b]
    seeds = UnitSeeds(exp, task.dataset, base, task.rep, _fraction(exp, axis))
    family = _base_group(exp, b, speedups)
    forest = forest_spec(base, family[1] if family[0] == "prefix" else None)
    train_noise = axis[1] if exp.protocol.noise_on in ("train", "both") else 0.0
    stages = [*range(exp.protocol.inner_folds), REFIT]
    return (
        data_key(exp, task.dataset),
        task.rep,
        exp.protocol.seeding,
        seeds.split,
        seeds.folds,
        seeds.test_fraction,
        exp.protocol.inner_folds,
        exp.scale,
        train_noise,
        forest,
        tuple(seeds.forest(s) for s in stages),
    )


def fuse_tasks(
    experiments: list[Experiment], tasks: list[list[UnitTask]], speedups: Speedups = Speedups()
) -> list[FusedTask]:
    """Each experiment's tasks (``tasks[i]`` of ``experiments[i]``, from ``unit_tasks``) as fused
    tasks: those with equal ``share_signature`` together, in order of first appearance; with
    ``fuse`` off, each task alone."""
    groups: dict[tuple, list] = {}
    for i, (exp, own) in enumerate(zip(experiments, tasks)):
        for n, task in enumerate(own):
            key = share_signature(exp, task, speedups) if speedups.fuse else (i, n)
            groups.setdefault(key, []).append((i, task))
    return [FusedTask(tuple(parts)) for parts in groups.values()]


def shared_work_fused(
    experiments: list[Experiment], task: FusedTask, speedups: Speedups = Speedups(), cache: ForestCache | None = None
) -> SharedWork:
    """One SharedWork for every part of a fused task: the largest tree count of each prefix family
    over all its units (when they differ: the others read prefixes, as within one experiment),
    training rows shared when there is more than one part (or a part shares them)."""
    bases = [experiments[i].bases[b] for i, part in task.parts for b, _ in part.members]
    share_rows = len(task.parts) > 1 or any(_repeats_a_base(part) for _, part in task.parts)
    return SharedWork(speedups, _largest_counts(bases, speedups), share_rows=share_rows, cache=cache)


def run_fused_task(
    experiments: list[Experiment],
    task: FusedTask,
    data: list[tuple[np.ndarray, np.ndarray]],
    speedups: Speedups = Speedups(),
    on_unit=None,
    cache: ForestCache | None = None,
) -> list[tuple[int, UnitRecord]]:
    """Every unit of every part, in order, on one SharedWork: (experiment index, record) each.
    ``data[i]``: experiment i's (X, y) of the task's dataset; ``on_unit(experiment index, base
    index, axis)`` is called before each unit."""
    shared = shared_work_fused(experiments, task, speedups, cache)
    out = []
    for i, part in task.parts:

        def starting(b, axis, i=i):
            if on_unit is not None:
                on_unit(i, b, axis)

        out += [(i, record) for record in run_task(experiments[i], part, *data[i], speedups, starting, shared)]
    return out
