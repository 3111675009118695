"""B against A over datasets, as the papers compare a proposed model with a baseline: per base
the per-dataset means, Demšar's paired t-test, Wilcoxon and the win/tie/loss count."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.stats import TTestResult, paired_ttest, wilcoxon_test
from afr_cli.tables.format import (
    CSV_FLOAT, METRIC_NAMES, base_key, check_format, dataset_key, document, format_diff, format_value, grid,
    model_key)
from afr_cli.tables.summary import summary_long, with_axes_in_dataset

TEST_COLUMNS = [
    "base", "metric", "a", "b", "n", "mean_diff", "t", "p", "ci_low", "ci_high",
    "wilcoxon_stat", "wilcoxon_p", "wins", "ties", "losses",
]


@dataclass(frozen=True)
class BaseComparison:
    """B against A on one base: per-dataset means and the tests of B − A over shared datasets."""

    base: str
    per_dataset: pd.DataFrame  # dataset, <a>, <b>, "<b> − <a>"
    ttest: TTestResult
    wilcoxon: tuple[float, float]
    record: "WinRecord"
    reps: tuple[int, int]  # fewest and most repetitions behind a dataset's pair of means

    def reps_span(self, joiner: str = " to ") -> str:
        """'20' when every dataset's pair of means has the same count, else 'fewest<joiner>most'."""
        low, high = self.reps
        return f"{low}" if low == high else f"{low}{joiner}{high}"

    def reps_text(self) -> str:
        return f"each dataset's means over the {self.reps_span()} repetitions (splits) both models hold"


@dataclass(frozen=True)
class WinRecord:
    """Datasets where B is better than, equal to or worse than A at the tables' printed precision
    (the papers count "outperforms on N datasets" this way); better is higher R², lower errors."""

    wins: tuple[str, ...]
    ties: tuple[str, ...]
    losses: tuple[str, ...]

    @classmethod
    def count(cls, table: pd.DataFrame, a: str, b: str, metric: str) -> "WinRecord":
        sign = 1 if metric == "r2" else -1
        outcome = {"win": [], "tie": [], "loss": []}
        for row in table.dropna(subset=[a, b]).to_dict("records"):
            shown_a, shown_b = (float(format_value(row[m], metric)) for m in (a, b))
            key = "tie" if shown_a == shown_b else ("win" if sign * (shown_b - shown_a) > 0 else "loss")
            outcome[key].append(row["dataset"])
        return cls(tuple(outcome["win"]), tuple(outcome["tie"]), tuple(outcome["loss"]))

    def describe(self, a: str, b: str) -> str:
        where = "; ".join(f"{label} on {', '.join(names)}" for label, names in
                          (("ties", self.ties), ("loses", self.losses)) if names)
        return (f"{b} better than {a} on {len(self.wins)} of {len(self.wins) + len(self.ties) + len(self.losses)}"
                f" datasets at the printed precision ({len(self.ties)} ties, {len(self.losses)} losses)"
                + (f": {where}" if where else ""))


@dataclass(frozen=True)
class ModelComparison:
    """B against A, as the papers compare a proposed model with a baseline (mean of B − A)."""

    a: str
    b: str
    metric: str
    bases: list[BaseComparison]

    def tests_frame(self) -> pd.DataFrame:
        """One row per base: base, metric, a, b, n, mean_diff, t, p, ci_low, ci_high, wilcoxon_*."""
        rows = [{"base": c.base, "metric": self.metric, "a": self.a, "b": self.b,
                 "n": c.ttest.n, "mean_diff": c.ttest.mean_diff, "t": c.ttest.t, "p": c.ttest.p,
                 "ci_low": c.ttest.ci_low, "ci_high": c.ttest.ci_high,
                 "wilcoxon_stat": c.wilcoxon[0], "wilcoxon_p": c.wilcoxon[1], "wins": len(c.record.wins),
                 "ties": len(c.record.ties), "losses": len(c.record.losses)} for c in self.bases]
        return pd.DataFrame(rows, columns=TEST_COLUMNS)


def compare_models(results: pd.DataFrame, a: str, b: str, metric: str = "r2") -> ModelComparison:
    """Per base holding both models: the per-dataset means of A and B and B − A, with the paired
    t-test and Wilcoxon test of B − A over the datasets both have."""
    if a == b:
        raise AfrInputError(f"--compare: needs two different models, got {a!r} twice")
    results = with_axes_in_dataset(results)  # one row per (dataset, unit axes) cell
    if ":" in a or ":" in b:
        results = _across_bases(results, a, b)
    known = sorted(results["model"].unique(), key=model_key)
    for model in (a, b):
        if model not in known:
            raise AfrInputError(f"--compare: unknown model {model!r}; models in the results: {', '.join(known)}")
    long = summary_long(_shared_repetitions(results, a, b))
    long = long[long["metric"] == metric]
    shared = sorted(set(long.loc[long["model"] == a, "base"]) & set(long.loc[long["model"] == b, "base"]),
                    key=base_key)
    if not shared:
        raise AfrInputError(f"--compare: models {a!r} and {b!r} share no base in the results")
    bases = []
    for base in shared:
        on_base = long[long["base"] == base].pivot(index="dataset", columns="model", values="mean")
        table = on_base[[a, b]].dropna(how="all")
        table = table.loc[sorted(table.index, key=dataset_key)].reset_index()
        table[f"{b} − {a}"] = table[b] - table[a]
        both = table.dropna()
        counts = long.loc[(long["base"] == base) & (long["model"] == a), "n_reps"]
        bases.append(BaseComparison(base, table, paired_ttest(both[b], both[a]),
                                    wilcoxon_test(both[b], both[a]), WinRecord.count(table, a, b, metric),
                                    (int(counts.min()), int(counts.max()))))
    return ModelComparison(a, b, metric, bases)


def _shared_repetitions(results: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Rows of A and B on the (base, dataset, repetition) both hold: each dataset's two means are
    then over the same splits, even when one store has been extended further than the other."""
    pair = results[results["model"].isin([a, b])]
    keys = ["base", "dataset", "rep"]
    held_by_both = pair.groupby(keys)["model"].nunique().loc[lambda n: n == 2].index
    return pair[pd.MultiIndex.from_frame(pair[keys]).isin(held_by_both)]


def _across_bases(results: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """``MODEL:BASE`` on both sides (e.g. larf:RF larf:ERT, LARF Table 7): the two models' rows
    relabelled as models ``a`` and ``b`` on one pseudo-base ``BASE_A vs BASE_B``."""
    sides = []
    for spec in (a, b):
        model, sep, base = spec.partition(":")
        if not sep or not model or not base:
            raise AfrInputError(f"--compare: {spec!r}: give both sides as MODEL:BASE (e.g. larf:RF larf:ERT)")
        bases = sorted(results["base"].unique(), key=base_key)
        if base not in bases:
            raise AfrInputError(f"--compare: unknown base {base!r} in {spec!r}; bases in the results: {', '.join(bases)}")
        sides.append(results[(results["model"] == model) & (results["base"] == base)].assign(model=spec))
    label = f"{a.partition(':')[2]} vs {b.partition(':')[2]}"
    return pd.concat(sides, ignore_index=True).assign(base=label)


def render_model_comparison(comparison: ModelComparison, fmt: str = "md") -> str:
    """csv: the tests, one row per base; md/latex: per base the per-dataset table and test lines."""
    check_format(fmt)
    if fmt == "csv":
        return comparison.tests_frame().to_csv(index=False, float_format=CSV_FLOAT)
    a, b, metric = comparison.a, comparison.b, comparison.metric
    parts = []
    for c in comparison.bases:
        rows = [[row["dataset"], format_value(row[a], metric), format_value(row[b], metric),
                 format_diff(row[f"{b} − {a}"], row[b], metric)] for row in c.per_dataset.to_dict("records")]
        t = c.ttest
        notes = [
            f"paired t-test (Demšar) of {b} − {a} over n = {t.n} datasets: mean {t.mean_diff:.4g},"
            f" t = {t.t:.4g}, p = {t.p:.4g}, 95 % CI [{t.ci_low:.4g}, {t.ci_high:.4g}]",
            f"Wilcoxon signed-rank: statistic {c.wilcoxon[0]:.4g}, p = {c.wilcoxon[1]:.4g}",
            c.record.describe(a, b),
            c.reps_text(),
        ]
        title = f"{b} against {a} on {METRIC_NAMES.get(metric, metric)}, base {c.base}"
        headers = ["dataset", a, b, f"{b} − {a}"]
        parts.append(document(title, grid(headers, rows, fmt), notes, fmt))
    return "\n".join(parts)


def render_comparison_overview(comparisons: list[ModelComparison]) -> str:
    """One markdown row per (comparison, base): B − A, its paired t-test and Wilcoxon p, and the
    win/tie/loss count; the overview above the per-dataset blocks of a report's compare.md."""
    rows = []
    for comparison in comparisons:
        for c in comparison.bases:
            t, r = c.ttest, c.record
            rows.append([f"{comparison.b} − {comparison.a}", c.base, f"{t.mean_diff:+.4f}", f"{t.p:.3g}",
                         f"[{t.ci_low:+.4f}, {t.ci_high:+.4f}]", f"{c.wilcoxon[1]:.3g}",
                         f"{len(r.wins)}/{len(r.ties)}/{len(r.losses)}",
                         c.reps_span("–")])
    headers = ["B − A", "base", "mean", "p (t-test)", "95 % CI", "p (Wilcoxon)", "better/tie/worse", "reps"]
    return grid(headers, rows, "md")
