"""``afr run --until-decided A B``: add repetitions in batches until the comparison of two models
is decided on every base, or a maximum count is reached, and record in the store why it stopped.

A repetition's seeds derive from its index (``afr_cli.engine.seeds``), never from the batch it
was computed in: a run stopped at 30 repetitions holds exactly the first 30 repetitions of a run
to 100, and any later run (``afr run`` with more ``--reps``, or ``--until-decided`` with a higher
``--max-reps``) extends it with repetition 30 onwards.

The decision is the one rule of ``afr table --compare`` (:mod:`afr_cli.analysis.decision`), taken
through one adapter, :func:`decide`: the only place this module reads the comparison code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd

from afr_cli.analysis.decision import SURE
from afr_cli.config.experiment import Experiment
from afr_cli.engine.messages import shell_line
from afr_cli.errors import AfrInputError
from afr_cli.store import ResultsStore, has_results, load_results, open_existing
from afr_cli.store.export import export_store

UNDECIDED = "undecided"  # the outcome while no event reaches SURE
NO_TEST = "no test decides yet"  # the outcome while too few repetitions are stored for any test
STOPPED_KEY = "stopped"  # the store manifest's entry saying why an --until-decided run stopped


@dataclass(frozen=True)
class BaseVerdict:
    """The comparison on one base: which outcome is most probable, with what probability, by which test."""

    base: str
    outcome: str  # "A better than B", "B better than A" or "A and B practically equivalent"
    probability: float
    test: str  # which test gave the probability

    @property
    def decided(self) -> bool:
        return self.outcome not in (UNDECIDED, NO_TEST) and self.probability >= SURE


@dataclass(frozen=True)
class Decision:
    """The comparison of two models on every base the results hold both on."""

    verdicts: tuple[BaseVerdict, ...]

    @property
    def decided(self) -> bool:
        return bool(self.verdicts) and all(v.decided for v in self.verdicts)

    def sentence(self) -> str:
        """Per base its verdict and the probability of the event it names, e.g. ``base RF: dt better
        than rf at P = 0.990 (P of the population's mean difference ...)``; an undecided base gives
        its most probable event's probability, below ``SURE``."""
        return "; ".join(_said(v) for v in self.verdicts)


def _said(v: BaseVerdict) -> str:
    if v.outcome == NO_TEST:
        return f"base {v.base}: {v.outcome} ({v.test})"
    if v.outcome == UNDECIDED:
        return f"base {v.base}: undecided (the most probable event at P = {v.probability:.3f} < {SURE:g}; {v.test})"
    return f"base {v.base}: {v.outcome} at P = {v.probability:.3f} ({v.test})"


def decide(results: pd.DataFrame, a: str, b: str, metric: str = "r2") -> Decision:
    """The adapter: on every base, the verdict of the one decision rule of ``afr table --compare A
    B`` (:mod:`afr_cli.analysis.decision`: a winner or practical equivalence only when the posterior
    probability of that event, the population's mean difference over datasets or the one dataset's
    mean difference, is at least ``SURE``), and the probability of the event it names."""
    from afr_cli.analysis import decision as rule
    from afr_cli.tables.compare_decision import decide_models

    outcome_of = {
        rule.A_BETTER: f"{a} better than {b}",
        rule.EQUIVALENT: f"{a} and {b} practically equivalent",
        rule.B_BETTER: f"{b} better than {a}",
    }
    verdicts = []
    for base, d in decide_models(results, a, b, metric).items():
        if d.verdict == rule.NO_TEST:
            verdicts.append(BaseVerdict(base, NO_TEST, 0.0, d.reason or "no test applies"))
        elif d.verdict == rule.UNDECIDED:
            verdicts.append(
                BaseVerdict(base, "undecided", 0.0, f"most probable event at P = {d.probability:.3f}; {d.event}")
            )
        else:
            verdicts.append(BaseVerdict(base, outcome_of[d.verdict], d.probability, f"P of {d.event}"))
    return Decision(tuple(verdicts))


def check_models(exp: Experiment, a: str, b: str) -> None:
    """Both models are the experiment's and differ, or one line naming the option and the choices."""
    ids = [m.id for m in exp.models]
    for model in (a, b):
        if model not in ids:
            raise AfrInputError(f"--until-decided: unknown model {model!r}; models of {exp.source}: {', '.join(ids)}")
    if a == b:
        raise AfrInputError(f"--until-decided: needs two different models, got {a!r} twice")


def stop_reason(decision: Decision, reps: int, maximum: int) -> dict:
    """The store's record of why the run stopped: decided on every base, or the maximum reached."""
    decided = decision.decided
    counted = f"{reps} repetition{'s' * (reps != 1)}"
    if decided:
        why = f"stopped at {counted}: decided on every base at P >= {SURE} ({decision.sentence()})"
    else:
        why = f"stopped at {counted}: reached the maximum ({maximum}), undecided ({decision.sentence()})"
    return {
        "reps": reps,
        "decided": decided,
        "maximum": maximum,
        "reason": why,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _stored_reps(exp: Experiment) -> int:
    """How many repetitions (0..n-1) the experiment's store holds on every dataset and base: 0 without a store."""
    if not has_results(exp.results):
        return 0
    units = open_existing(exp.results).frame("units")
    counts = units[units["dataset"].isin(exp.datasets)].groupby(["dataset", "base"])["rep"].nunique()
    return int(counts.min()) if len(counts) == len(exp.datasets) * len(exp.bases) else 0


def run_until_decided(
    experiment_at: Callable[[int], Experiment],
    run: Callable[[Experiment], ResultsStore],
    a: str,
    b: str,
    batch: int,
    maximum: int,
    echo: Callable[[str], None] = print,
    command: list[str] | None = None,
    fresh: bool = False,
) -> dict:
    """Run ``experiment_at(n)`` (the experiment at n repetitions) with ``run`` for n = batch,
    2 batch, ... up to ``maximum`` (starting from the repetitions its store already holds, when
    more: their verdict is the first asked), deciding A against B after each batch on repetitions 0..n-1;
    stop when every base is decided or at the maximum, record why in the store (and its export,
    when it has one) and return that record."""
    stored = 0 if fresh else _stored_reps(experiment_at(batch))  # --fresh: the first batch discards the store
    target = min(max(batch, stored), maximum)
    while True:
        exp = experiment_at(target)
        check_models(exp, a, b)
        store = run(exp)
        results = load_results(exp.results)
        results = results[results["rep"] < target]
        decision = decide(results, a, b, (exp.raw.get("protocol") or {}).get("select_by", "r2"))
        echo(f"after {target} repetition{'s' * (target != 1)}: {decision.sentence()}")
        if decision.decided or target >= maximum:
            break
        target = min(target + batch, maximum)
    record = stop_reason(decision, target, maximum)
    if command:
        record["command"] = shell_line(command)
    if store.exists():  # (a store seeded from nothing: a fresh clone's export alone is left as committed)
        store.create({STOPPED_KEY: record})
    if store.exists() and (store.directory / "export").is_dir():
        export_store(store.directory)  # the committed form carries the record too
    echo(record["reason"])
    return record
