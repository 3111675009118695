"""The one decision rule of a comparison of model B against model A.

A winner, or practical equivalence, is named only when the posterior probability of that very
event is at least ``SURE`` (0.95):

- over two datasets or more, the event is about the population's mean difference δ0 of the
  hierarchical Bayesian test (Corani et al. 2017, :mod:`afr_cli.analysis.hierarchical`): "B is
  better" is P(δ0 > rope), "equivalent" P(−rope ≤ δ0 ≤ rope), "A is better" P(δ0 < −rope);
- on one dataset, the event is about that dataset's mean difference, the posterior of the Bayesian
  correlated t-test over the repetitions (:mod:`afr_cli.analysis.bayesian`).

Otherwise the comparison is undecided, and the three probabilities are said in words. Beside the
event probabilities a decision keeps, where the test gives them, the next dataset's posterior
predictive probabilities and baycomp's region shares (the share of draws in which a region holds
the most predictive mass): these are shown, labelled as what they are, and never decide.

When the evidence over the datasets points in opposite directions (the hierarchical posterior
mean, the Bayesian signed-rank test, the majority of per-dataset wins, the plain mean over the
datasets), the decision lists the disagreement, whatever the verdict.

:func:`decide_paired` applies the rule to paired score differences given as arrays (one per
dataset); afr_cli/tables/decision.py applies it to a comparison built from stores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from afr_cli.analysis.bayesian import RopeProbabilities, correlated_ttest, signed_rank_test
from afr_cli.analysis.hierarchical import HierarchicalResult, hierarchical_test
from afr_cli.analysis.rope import DEFAULT_ROPE

SURE = 0.95  # a verdict is named only when the probability of its event is at least this
B_BETTER, A_BETTER, EQUIVALENT, UNDECIDED, NO_TEST = ("b_better", "a_better", "equivalent", "undecided", "no_test")
DECIDED = (B_BETTER, A_BETTER, EQUIVALENT)
POPULATION_EVENT = "the population's mean difference B − A (hierarchical Bayesian test over datasets × repetitions)"
DATASET_EVENT = "the dataset's mean difference B − A (Bayesian correlated t-test over the repetitions)"
RULE = (
    f"a winner, or practical equivalence, is named only when the posterior probability of that event is "
    f"at least {SURE:g}: over two datasets or more, the event is about the population's mean difference "
    f"(hierarchical Bayesian test), on one dataset about that dataset's mean difference (Bayesian correlated "
    f"t-test); otherwise the comparison is undecided"
)


@dataclass(frozen=True)
class Decision:
    """The rule's answer for B against A.

    ``verdict``: one of B_BETTER, A_BETTER, EQUIVALENT, UNDECIDED, NO_TEST; ``probability``: the
    probability of the verdict's event (for UNDECIDED, of the most probable of the three events;
    NaN for NO_TEST); ``probabilities``: P(A better) / P(equivalent) / P(B better) of ``event``;
    ``predictive`` and ``region_shares``: the next dataset's predictive probabilities and
    baycomp's region shares (hierarchical test only); ``directions``: each test's leaning
    ("a", "b" or "none"); ``conflict``: the sentence saying the tests disagree, or "";
    ``reason``: why no test applies (NO_TEST)."""

    verdict: str
    probability: float
    test: str  # "hierarchical", "correlated t", or "" for none
    event: str
    probabilities: RopeProbabilities | None
    predictive: RopeProbabilities | None = None
    region_shares: RopeProbabilities | None = None
    directions: dict[str, str] = field(default_factory=dict)
    conflict: str = ""
    reason: str = ""

    @property
    def decided(self) -> bool:
        """True when a winner or practical equivalence is named."""
        return self.verdict in DECIDED

    def as_dict(self) -> dict:
        """Plain JSON values: the verdict, the event and its probabilities beside the region shares."""

        def probs(p: RopeProbabilities | None) -> dict | None:
            if p is None:
                return None
            return {"p_a_better": p.left, "p_equivalent": p.rope, "p_b_better": p.right}

        return {
            "rule": RULE,
            "threshold": SURE,
            "verdict": self.verdict,
            "decided": self.decided,
            "probability": self.probability,
            "test": self.test,
            "event": self.event,
            "event_probabilities": probs(self.probabilities),
            "next_dataset_predictive": probs(self.predictive),
            "region_shares": probs(self.region_shares),
            "directions": dict(self.directions),
            "conflict": self.conflict,
            "reason": self.reason,
        }


def rule(probabilities: RopeProbabilities, sure: float = SURE) -> tuple[str, float]:
    """(verdict, its probability): the event at or above ``sure`` if one is, else UNDECIDED with the
    largest of the three probabilities; NO_TEST when they are undefined (NaN)."""
    values = (probabilities.left, probabilities.rope, probabilities.right)
    if any(math.isnan(v) for v in values):
        return NO_TEST, math.nan
    best = max(values)
    if best >= sure:
        return (A_BETTER, EQUIVALENT, B_BETTER)[values.index(best)], best
    return UNDECIDED, best


def _leaning(left: float, right: float, inside: float = 0.0) -> str:
    """The side with the larger of ``left`` and ``right``, when it is larger than ``inside`` too
    (evidence that mostly says "within the ROPE" leans nowhere)."""
    if any(math.isnan(v) for v in (left, right, inside)) or left == right or max(left, right) <= inside:
        return "none"
    return "b" if right > left else "a"


def directions_of(
    hierarchical: HierarchicalResult | None,
    signed_rank: RopeProbabilities | None,
    wins: int,
    losses: int,
    mean_difference: float,
    mean_rope: float = 0.0,
) -> dict[str, str]:
    """Each piece of evidence over the datasets and the side it leans to ("a", "b" or "none"): the
    hierarchical population mean (its larger side probability, when above the ROPE's), the
    signed-rank test (likewise, with its region shares), the majority of per-dataset wins and
    losses, and the plain mean difference over the datasets when beyond ±``mean_rope`` (B − A
    oriented so that > 0 is B better)."""
    out = {}
    if hierarchical is not None:
        pop = hierarchical.population
        out["hierarchical mean"] = _leaning(pop.left, pop.right, pop.rope)
    if signed_rank is not None:
        out["signed-rank"] = _leaning(signed_rank.left, signed_rank.right, signed_rank.rope)
    out["per-dataset wins"] = _leaning(float(losses), float(wins))
    if not math.isnan(mean_difference) and abs(mean_difference) > mean_rope:
        out["mean over datasets"] = _leaning(-mean_difference, mean_difference)
    return out


def conflict_text(directions: dict[str, str], a: str = "A", b: str = "B") -> str:
    """'the tests over the datasets point in opposite directions: ... favour B; ... favour A', or ''."""
    for_b = [k for k, v in directions.items() if v == "b"]
    for_a = [k for k, v in directions.items() if v == "a"]
    if not for_a or not for_b:
        return ""
    verb_b = "favours" if len(for_b) == 1 else "favour"
    verb_a = "favours" if len(for_a) == 1 else "favour"
    return (
        f"the evidence over the datasets points in opposite directions: {', '.join(for_b)} {verb_b} {b}; "
        f"{', '.join(for_a)} {verb_a} {a}"
    )


def from_hierarchical(result: HierarchicalResult, directions: dict[str, str], a: str = "A", b: str = "B") -> Decision:
    """The rule on a hierarchical test's population-mean probabilities (B better = right)."""
    verdict, p = rule(result.population)
    return Decision(
        verdict,
        p,
        "hierarchical",
        POPULATION_EVENT,
        result.population,
        result.predictive,
        result.probabilities,
        directions,
        conflict_text(directions, a, b),
    )


def from_dataset(probabilities: RopeProbabilities, directions: dict[str, str] | None = None) -> Decision:
    """The rule on one dataset's correlated t-test probabilities (B better = right)."""
    verdict, p = rule(probabilities)
    reason = "" if verdict != NO_TEST else "the correlated t-test over repetitions needs at least 2 repetitions"
    return Decision(
        verdict, p, "correlated t", DATASET_EVENT, probabilities, directions=directions or {}, reason=reason
    )


def no_test(reason: str, directions: dict[str, str] | None = None, a: str = "A", b: str = "B") -> Decision:
    """No test of the rule applies: the reason, and what the other evidence leans to."""
    directions = directions or {}
    return Decision(
        NO_TEST, math.nan, "", "", None, directions=directions, conflict=conflict_text(directions, a, b), reason=reason
    )


def decide_paired(
    differences: Sequence[ArrayLike],
    rho: float | Sequence[float] = 0.2,
    rope: float = DEFAULT_ROPE,
    samples: int = 3000,
    burn_in: int = 500,
    seed: int = 0,
) -> Decision:
    """The rule on paired differences B − A (one array per dataset, one value per repetition,
    oriented so that a positive value is B better; ``rho`` = n_test / n per dataset or one for all):
    the hierarchical test over two datasets or more, the correlated t-test on one. A hierarchical
    test that cannot run (a dataset with fewer than 2 repetitions, no variation) gives NO_TEST with
    its reason."""
    rows = [np.asarray(d, dtype=float).ravel() for d in differences]
    if not rows:
        return no_test("no dataset to compare")
    means = np.array([r.mean() if r.size else math.nan for r in rows])
    wins, losses = int((means > 0).sum()), int((means < 0).sum())
    if len(rows) == 1:
        r = float(rho if np.ndim(rho) == 0 else np.asarray(rho, dtype=float).ravel()[0])
        return from_dataset(correlated_ttest(rows[0], r, rope).probabilities)
    signed = signed_rank_test(means, rope).probabilities
    try:
        result = hierarchical_test(rows, rho, rope, samples, burn_in, seed)
    except ValueError as exc:
        return no_test(
            f"the hierarchical test does not apply: {exc}",
            directions_of(None, signed, wins, losses, float(means.mean()), rope),
        )
    return from_hierarchical(result, directions_of(result, signed, wins, losses, float(means.mean()), rope))
