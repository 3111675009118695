"""Where a reproduction's CPU goes, step by step: ``afr bench steps``.

The stores record each unit's CPU seconds, but not how they split between the steps of a unit.
This benchmark runs the first repetitions of every planned experiment the way ``afr reproduce``
does (the same fused tasks and shared work, in this process) with a process-time clock around
each step, and scales each step to the papers' repetitions:

- ``forest fit``: fitting the base ensembles (``engine.forest_fit.fit_forest``);
- ``leaf statistics and rows``: the forest's leaves over the training and query rows (apply,
  leaf means and counts, the rows' tensors), the rest of the forest step;
- ``features: FAMILY``, ``problem: FAMILY``, ``solve: FAMILY``, ``predict: FAMILY``: a model
  family's features, the building of its QP/LP, its solves (Gram form and solver, memo included)
  and its predictions;
- ``other``: the rest of a unit (splits, scaling, noise, scores, the selection).

Times are exclusive: a step called inside another is charged to itself only. A unit's steps
are scaled by its experiment's repetitions over the ones sampled; a fused task's forest steps
by the most repetitions any of its experiments runs (every one of those repetitions fits that
forest). Reading the data is not counted (once per dataset and experiment).
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

from afr_cli.engine import forest_fit, protocol
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.shared_work import SharedWork, Speedups
from afr_cli.engine.tasks import fuse_tasks, run_fused_task, unit_tasks
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.reproduction.pipeline import plan, resolve_targets
from afr_cli.solvers.memo import SolveMemo

FOREST_STEPS = ("forest fit", "leaf statistics and rows")


class StepClock:
    """Exclusive process time per (step, scale): the step on top of the stack is charged."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)  # step -> scaled CPU seconds
        self.sampled: dict[str, float] = defaultdict(float)  # step -> CPU seconds as measured
        self._stack: list[str] = []
        self._last = time.process_time()
        self.unit_scale = 1.0  # the running unit's experiment: its repetitions / the sampled ones
        self.forest_scale = 1.0  # the running task's: the most repetitions of its experiments / sampled

    def settle(self) -> None:
        """Charge the time since the last charge to the step on top (``other`` between steps)."""
        now = time.process_time()
        step = self._stack[-1] if self._stack else "other"
        scale = self.forest_scale if step in FOREST_STEPS else self.unit_scale
        self.seconds[step] += (now - self._last) * scale
        self.sampled[step] += now - self._last
        self._last = now

    @contextmanager
    def step(self, name: str):
        self.settle()
        self._stack.append(name)
        try:
            yield
        finally:
            self.settle()
            self._stack.pop()

    def restart(self) -> None:
        """Forget the time since the last charge (work outside the units: not counted)."""
        self._last = time.process_time()


class _TimedFamily:
    """A model family whose features, problem building and predictions run on the clock."""

    def __init__(self, family, name: str, clock: StepClock) -> None:
        self._family, self._name, self._clock = family, name, clock

    def __getattr__(self, attr):
        return getattr(self._family, attr)

    def features(self, *args, **kwargs):
        with self._clock.step(f"features: {self._name}"):
            return self._family.features(*args, **kwargs)

    def training_problem(self, *args, **kwargs):
        with self._clock.step(f"problem: {self._name}"):
            return self._family.training_problem(*args, **kwargs)

    def predict(self, *args, **kwargs):
        with self._clock.step(f"predict: {self._name}"):
            return self._family.predict(*args, **kwargs)


def _timed(clock: StepClock, name, original):
    """``original`` (a function or method) on the clock as step ``name`` (a callable of the
    call's arguments when the step's name depends on them)."""

    def wrapper(*args, **kwargs):
        with clock.step(name(*args, **kwargs) if callable(name) else name):
            return original(*args, **kwargs)

    return wrapper


def _instrumented(clock: StepClock, stack: ExitStack) -> None:
    """Put every step of a unit on the clock (undone when ``stack`` closes)."""
    current = {"family": "?"}
    get_family, score_model = protocol.get_family, protocol._score_model

    def score(model, *args, **kwargs):
        current["family"] = model.family
        return score_model(model, *args, **kwargs)

    stack.enter_context(
        mock.patch.object(protocol, "get_family", lambda name: _TimedFamily(get_family(name), name, clock))
    )
    stack.enter_context(mock.patch.object(protocol, "_score_model", score))
    stack.enter_context(mock.patch.object(forest_fit, "fit_forest", _timed(clock, "forest fit", forest_fit.fit_forest)))
    stack.enter_context(
        mock.patch.object(SharedWork, "training", _timed(clock, "leaf statistics and rows", SharedWork.training))
    )
    stack.enter_context(
        mock.patch.object(LeafStatistics, "rows", _timed(clock, "leaf statistics and rows", LeafStatistics.rows))
    )
    stack.enter_context(
        mock.patch.object(
            SolveMemo, "solve", _timed(clock, lambda *a, **k: f"solve: {current['family']}", SolveMemo.solve)
        )
    )


def run(reps: int = 1, datasets: list[str] | None = None, papers: list[str] | None = None) -> dict:
    """The first ``reps`` repetitions of every planned experiment (of ``papers``; default all),
    fused as ``afr reproduce`` fuses them, each step's CPU measured and scaled to the papers'
    repetitions."""
    targets = resolve_targets(list(papers or []), every=not papers)
    with tempfile.TemporaryDirectory() as empty:  # a root holding no store: every unit is planned
        planned = [p for p in plan(targets, Path(empty), None, datasets) if p.exp is not None]
    experiments = [p.exp for p in planned]
    todos = [[u for u in p.missing if u[-1] < reps] for p in planned]
    speedups = Speedups()
    tasks = fuse_tasks(experiments, [unit_tasks(e, todo, speedups) for e, todo in zip(experiments, todos)], speedups)
    data: dict[tuple[int, str], tuple] = {}
    clock = StepClock()
    units = 0
    with ExitStack() as stack:
        _instrumented(clock, stack)
        for task in tasks:
            dataset = task.parts[0][1].dataset
            for i, _ in task.parts:
                if (i, dataset) not in data:
                    data[(i, dataset)] = load_one(experiments[i], dataset)
            clock.forest_scale = max(experiments[i].protocol.reps for i, _ in task.parts) / reps

            def starting(i, b, axis):
                clock.unit_scale = experiments[i].protocol.reps / reps

            clock.restart()
            records = run_fused_task(
                experiments, task, [data.get((i, dataset)) for i in range(len(experiments))], speedups, starting
            )
            clock.settle()  # the last unit's tail, after its last step
            units += len(records)
    total = sum(clock.seconds.values())
    steps = sorted(clock.seconds, key=lambda s: -clock.seconds[s])
    return {
        "reps": reps,
        "datasets": sorted({t.parts[0][1].dataset for t in tasks}),
        "experiments": [str(p.spec.store()) for p in planned],
        "units": units,
        "sampled_cpu_s": round(sum(clock.sampled.values()), 3),
        "projected_cpu_min": round(total / 60, 2),
        "steps": [
            {
                "step": s,
                "sampled_cpu_s": round(clock.sampled[s], 4),
                "projected_cpu_min": round(clock.seconds[s] / 60, 6),
                "share": round(clock.seconds[s] / total, 4) if total else 0.0,
            }
            for s in steps
        ],
    }
