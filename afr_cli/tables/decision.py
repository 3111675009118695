"""The decision rule (afr_cli/analysis/decision.py) applied to a comparison built from stores.

:func:`decide_base` reads one base of a :class:`ModelComparison` (its hierarchical test, or on one
dataset its correlated t-test, and the signed-rank test, the win count and the mean as the other
evidence). The entry point from stores' rows is afr_cli/tables/compare_decision.py's
``decide_models`` (it builds the comparison, which this module cannot import: the answer reads it).
"""

from __future__ import annotations

import math

from afr_cli.analysis.decision import Decision, directions_of, from_dataset, from_hierarchical, no_test
from afr_cli.tables.comparison import BaseComparison, ModelComparison

ACROSS = "tests over datasets need at least 2 datasets"


def decide_base(comparison: ModelComparison, c: BaseComparison) -> Decision:
    """The rule's decision for B against A on one base of ``comparison``."""
    a, b = comparison.a, comparison.b
    better = 1.0 if comparison.metric == "r2" else -1.0  # B − A oriented so that > 0 is B better
    datasets = len(c.per_dataset.dropna())
    if datasets <= 1 or c.ttest.n < 2:
        bayes = next(iter(c.per_dataset_bayes.values()), None)
        if bayes is None:
            return no_test("no repetition both models hold")
        return from_dataset(bayes.probabilities)
    hier = c.hierarchical
    signed = c.signed_rank.probabilities
    mean = better * c.ttest.mean_diff
    # the mean over datasets leans only beyond the ROPE: in the metric's unit, or on an error metric a
    # share of A's mean error (the ROPE is relative there)
    a_level = float(c.per_dataset[a].mean()) if comparison.metric != "r2" else 1.0
    mean_rope = comparison.rope * abs(a_level)
    directions = directions_of(hier.result, signed, len(c.record.wins), len(c.record.losses), mean, mean_rope)
    if hier.result is None:
        return no_test(f"the hierarchical test does not apply: {hier.reason}", directions, a, b)
    return from_hierarchical(hier.result, directions, a, b)


def decide_comparison(comparison: ModelComparison) -> list[Decision]:
    """The decision on every base of ``comparison``, in its order."""
    return [decide_base(comparison, c) for c in comparison.bases]


def probabilities_in_words(d: Decision, a: str, b: str) -> str:
    """The event's three probabilities as a phrase: 'P(b better) 0.58, P(equivalent) 0.30, P(a better) 0.12'."""
    p = d.probabilities
    if p is None or math.isnan(p.rope):
        return ""
    return f"P({b} better) = {p.right:.3f}, P(equivalent) = {p.rope:.3f}, P({a} better) = {p.left:.3f}"
