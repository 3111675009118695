"""The one sentence `afr table --compare` opens with ("answers first"): which model, by
how much, how sure, over how many datasets and repetitions, the evidence following it.

Per base the answer is the decision rule's (afr_cli/analysis/decision.py): a winner or practical
equivalence only when the probability of that event is at least 0.95 (the population's mean
difference by the hierarchical Bayesian test over datasets × repetitions; on one dataset, that
dataset's mean difference by its Bayesian correlated t-test), else "undecided" with the
probabilities in words, and a word when the evidence over the datasets points both ways. Fewer
than FEW_REPS repetitions or FEW_DATASETS datasets are named in the sentence, and a test that
does not apply is never printed as NaN: the reason it does not apply is said instead
(:func:`not_applicable`).
"""

from __future__ import annotations

import math

from afr_cli.analysis.decision import A_BETTER, B_BETTER, EQUIVALENT, NO_TEST, RULE, SURE, Decision
from afr_cli.tables.comparison import BaseComparison, ModelComparison
from afr_cli.tables.decision import decide_base
from afr_cli.tables.format import METRIC_NAMES

FEW_REPS = 10  # the papers' own count: fewer is named in the answer
FEW_DATASETS = 5  # below this an across-dataset test has little power: named in the answer
ACROSS = "tests over datasets need at least 2 datasets"
REPS_NEEDED = "at least 2 repetitions"


def not_applicable(c: BaseComparison) -> dict[str, str]:
    """The tests over datasets that do not apply on this base, each with the reason."""
    n = c.ttest.n
    if n >= 2:
        return {}
    why = f"{ACROSS}; base {c.base} has {n}"
    return {name: why for name in ("ttest", "wilcoxon", "signed_rank", "effect_sizes")}


def _counts(c: BaseComparison, datasets: int) -> str:
    low, high = c.reps
    reps = f"{low}" if low == high else f"{low} to {high}"
    few_d = "only " if datasets < FEW_DATASETS else ""
    few_r = "only " if low < FEW_REPS else ""
    names = ""
    if datasets < FEW_DATASETS:
        names = ", " + ", ".join(str(d) for d in c.per_dataset.dropna()["dataset"]) + ","
    plural_d = "dataset" if datasets == 1 else "datasets"
    plural_r = "repetition" if high == 1 else "repetitions"
    return f"{few_d}{datasets} {plural_d}{names} and {few_r}{reps} {plural_r}"


def _verdict(a: str, b: str, d: Decision, metric_name: str, rope_text: str) -> str:
    """The phrase the decision names: a winner or equivalence only when decided, else 'undecided'."""
    if d.verdict == B_BETTER:
        return f"{b} is better than {a} on {metric_name}"
    if d.verdict == A_BETTER:
        return f"{b} is worse than {a} on {metric_name}"
    if d.verdict == EQUIVALENT:
        return f"{a} and {b} are practically equivalent on {metric_name} (within {rope_text})"
    return f"undecided between {a} and {b} on {metric_name} (no event reaches P ≥ {SURE:g})"


def _by_how_much(c: BaseComparison, a: str, b: str, metric: str) -> str:
    diff = c.ttest.mean_diff
    if math.isnan(diff):
        return ""
    text = f"mean {b} − {a} {diff:+.4f}" if metric == "r2" else f"mean {b} − {a} {diff:+.4g}"
    rel = c.intervals.log_ratio if c.intervals.effects is not None else None
    if rel is not None:
        text += f", {100 * (math.exp(rel.estimate) - 1):+.1f} % relative"
    elif metric != "r2" and c.ttest.n == 1:
        row = c.per_dataset.dropna().iloc[0]
        if row[a] > 0:
            text += f", {100 * (row[b] / row[a] - 1):+.1f} % relative"
    return text


def _population_mean(hier, metric: str) -> str:
    """The hierarchical model's mean difference δ0 (it shrinks noisy and outlying datasets, so it
    can differ from the plain mean over the datasets): B − A, or for an error metric the relative change."""
    if hier.relative:
        return f"{100 * (math.exp(-hier.result.mean) - 1):+.1f} %"
    return f"{hier.result.mean:+.4f}" if metric == "r2" else f"{hier.result.mean:+.4g}"


def _event_words(d: Decision, a: str, b: str, rope_text: str, over: str) -> str:
    """'P = 0.97 that …' when decided, else the three probabilities of the event in words."""
    p = d.probabilities
    if d.decided:
        what = {
            B_BETTER: f"{b} is better by more than the ROPE ({rope_text})",
            A_BETTER: f"{a} is better by more than the ROPE ({rope_text})",
            EQUIVALENT: f"the difference is within {rope_text}",
        }[d.verdict]
        return f"P = {d.probability:.3f} that {what}, for {over}"
    return (
        f"for {over}: P({b} better, beyond the ROPE) = {p.right:.3f}, P(within {rope_text}) = {p.rope:.3f}, "
        f"P({a} better) = {p.left:.3f}"
    )


def _clause(comparison: ModelComparison, c: BaseComparison) -> str:
    a, b, metric = comparison.a, comparison.b, comparison.metric
    metric_name = METRIC_NAMES.get(metric, metric)
    datasets = int(c.ttest.n) if c.ttest.n else len(c.per_dataset.dropna())
    counts = _counts(c, datasets)
    how_much = _by_how_much(c, a, b, metric)
    how = f", {how_much}" if how_much else ""
    d = decide_base(comparison, c)
    conflict = f"; {d.conflict}" if d.conflict else ""
    if d.test == "hierarchical":
        hier = c.hierarchical
        rope_text = hier.rope_text(metric_name)
        pred = d.predictive
        over = (
            f"the population's mean difference {b} − {a} ({_population_mean(hier, metric)}), "
            f"by the hierarchical Bayesian test over {counts}"
        )
        return (
            f"{_verdict(a, b, d, metric_name, rope_text)}{how} ({_event_words(d, a, b, rope_text, over)}; "
            f"the next dataset's difference: {pred.right:.3f} / {pred.rope:.3f} / {pred.left:.3f} "
            f"({b} better / within / {a} better, posterior predictive){conflict})"
        )
    rope = f"±{comparison.rope:g} {metric_name}"
    if d.test == "correlated t" and d.verdict != NO_TEST:
        over = f"the dataset's mean difference, by the Bayesian correlated t-test over {counts}; {ACROSS}"
        return f"{_verdict(a, b, d, metric_name, rope)}{how} ({_event_words(d, a, b, rope, over)})"
    if c.ttest.n >= 2:  # two datasets or more and no hierarchical test: undecided, the other evidence said
        sr = c.signed_rank.probabilities
        return (
            f"undecided between {a} and {b} on {metric_name}{how} over {counts}: {d.reason}; "
            f"the Bayesian signed-rank test's region shares (not event probabilities) are {sr.right:.3f} "
            f"/ {sr.rope:.3f} / {sr.left:.3f} ({b} better / within {rope} / {a} better){conflict}"
        )
    return (
        f"no test decides between {a} and {b} on {metric_name}: {how_much or 'no shared score'} over {counts}; "
        f"{ACROSS} and the correlated t-test over repetitions needs {REPS_NEEDED}"
    )


def rule_sentence() -> str:
    """The decision rule, as the output states it."""
    return f"Decision rule: {RULE}."


def answer_sentence(comparison: ModelComparison) -> str:
    """One sentence answering "is B better than A?", per base when there are several."""
    clauses = [_clause(comparison, c) for c in comparison.bases]
    if len(clauses) == 1:
        return f"Answer (base {comparison.bases[0].base}): {clauses[0]}."
    return "Answer: " + "; ".join(f"on base {c.base}, {clause}" for c, clause in zip(comparison.bases, clauses)) + "."
