"""The one sentence `afr table --compare` opens with (issue 33, "answers first"): which model, by
how much, how sure, over how many datasets and repetitions, the evidence following it.

Per base the answer comes from the strongest test that applies: the hierarchical Bayesian test
over datasets × repetitions; on one dataset, that dataset's Bayesian correlated t-test over the
repetitions; else the mean difference alone. Fewer than FEW_REPS repetitions or FEW_DATASETS
datasets are named in the sentence, and a test that does not apply is never printed as NaN: the
reason it does not apply is said instead (:func:`not_applicable`).
"""

from __future__ import annotations

import math

from afr_cli.tables.comparison import BaseComparison, ModelComparison
from afr_cli.tables.format import METRIC_NAMES

FEW_REPS = 10  # the papers' own count: fewer is named in the answer
FEW_DATASETS = 5  # below this an across-dataset test has little power: named in the answer
SURE = 0.95  # a region with at least this posterior probability is stated plainly
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


def _verdict(a: str, b: str, probs, metric_name: str, rope_text: str) -> tuple[str, float]:
    """(the phrase, its probability) for the region with the most posterior probability."""
    best = max(probs.left, probs.rope, probs.right)
    hedge = "is" if best >= SURE else ("is probably" if best >= 0.5 else "may be")
    if probs.right == best:
        return f"{b} {hedge} better than {a} on {metric_name}", best
    if probs.left == best:
        return f"{b} {hedge} worse than {a} on {metric_name}", best
    verb = "are" if best >= SURE else ("are probably" if best >= 0.5 else "may be")
    return f"{a} and {b} {verb} practically equivalent on {metric_name} (within {rope_text})", best


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


def _clause(comparison: ModelComparison, c: BaseComparison) -> str:
    a, b, metric = comparison.a, comparison.b, comparison.metric
    metric_name = METRIC_NAMES.get(metric, metric)
    datasets = int(c.ttest.n) if c.ttest.n else len(c.per_dataset.dropna())
    counts = _counts(c, datasets)
    how_much = _by_how_much(c, a, b, metric)
    hier = c.hierarchical
    if hier.result is not None:
        verdict, p = _verdict(a, b, hier.result.probabilities, metric_name, hier.rope_text(metric_name))
        return (
            f"{verdict}, {how_much} (P = {p:.3f} by the hierarchical Bayesian test over {counts}, "
            f"whose population mean is {_population_mean(hier, metric)})"
        )
    rope = f"±{comparison.rope:g} {metric_name}"
    if not not_applicable(c):  # two datasets or more: the signed-rank test over them still applies
        verdict, p = _verdict(a, b, c.signed_rank.probabilities, metric_name, rope)
        return (
            f"{verdict}, {how_much} (P = {p:.3f} by the Bayesian signed-rank test over {counts}; "
            f"the hierarchical test does not apply: {hier.reason})"
        )
    bayes = next(iter(c.per_dataset_bayes.values()), None)
    if bayes is not None and not math.isnan(bayes.probabilities.rope):
        verdict, p = _verdict(a, b, bayes.probabilities, metric_name, rope)
        return f"{verdict}, {how_much} (P = {p:.3f} by the Bayesian correlated t-test over {counts}; {ACROSS})"
    return (
        f"no test decides between {a} and {b} on {metric_name}: {how_much or 'no shared score'} over {counts}; "
        f"{ACROSS} and the correlated t-test over repetitions needs {REPS_NEEDED}"
    )


def answer_sentence(comparison: ModelComparison) -> str:
    """One sentence answering "is B better than A?", per base when there are several."""
    clauses = [_clause(comparison, c) for c in comparison.bases]
    if len(clauses) == 1:
        return f"Answer (base {comparison.bases[0].base}): {clauses[0]}."
    return "Answer: " + "; ".join(f"on base {c.base}, {clause}" for c, clause in zip(comparison.bases, clauses)) + "."
