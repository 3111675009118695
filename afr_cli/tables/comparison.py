"""The result of `afr table --compare`: B against A per base (``BaseComparison``), the papers'
win/tie/loss count (``WinRecord``) and the comparison over every base (``ModelComparison``).

Their own module so that the modules reading them, the renderers in afr_cli/tables/compare.py
and the answer in afr_cli/tables/compare_answer.py, both import them (compare.py builds them and
imports compare_answer: the classes could not live in compare.py without a circle). The evidence
beyond the papers' tests (the hierarchical test, the effect intervals) is computed when first
asked for (afr_cli/tables/compare_evidence.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from afr_cli.analysis.bayesian import DEFAULT_ROPE, CorrelatedTTestResult, SignedRankResult
from afr_cli.analysis.stats import EffectSizes, TTestResult, holm_adjust
from afr_cli.tables.compare_evidence import Hierarchical, Intervals, hierarchical_for_base, intervals_for_base
from afr_cli.tables.format import METRIC_NAMES, format_value
from afr_cli.tables.pairing import Dropped

TEST_COLUMNS = [
    "base",
    "metric",
    "a",
    "b",
    "n",
    "mean_diff",
    "t",
    "p",
    "p_holm",
    "ci_low",
    "ci_high",
    "cohen_dz",
    "wilcoxon_stat",
    "wilcoxon_p",
    "rank_biserial",
    "wins",
    "ties",
    "losses",
    "rope",
    "p_a_better",
    "p_equivalent",
    "p_b_better",
]


@dataclass(frozen=True)
class BaseComparison:
    """B against A on one base: per-dataset means and the tests of B − A over shared datasets."""

    base: str
    per_dataset: pd.DataFrame  # dataset, <a>, <b>, "<b> − <a>"
    ttest: TTestResult
    wilcoxon: tuple[float, float]
    record: WinRecord
    reps: tuple[int, int]  # fewest and most repetitions behind a dataset's pair of means
    effects: EffectSizes  # of B − A over the datasets
    signed_rank: SignedRankResult  # on "B better" orientation: right = B better
    per_dataset_bayes: dict[str, CorrelatedTTestResult]  # dataset -> correlated t-test, B better = right
    pooled: str = ""  # how cells sharing a split were pooled into the tests' units ('' = not)
    dropped: Dropped = Dropped()  # repetitions dropped because a model's score is undefined
    # (paired rows of this base, the tests' units, a, b, metric, rope): what the evidence below is
    # computed from, when first asked for (the papers' studies read only the tests above)
    evidence_input: tuple | None = None

    @cached_property
    def hierarchical(self) -> Hierarchical:
        """The hierarchical Bayesian test over datasets × repetitions (afr_cli/tables/compare_evidence.py)."""
        rows, _, a, b, metric, rope = self.evidence_input
        return hierarchical_for_base(rows, a, b, metric, rope)

    @cached_property
    def intervals(self) -> Intervals:
        """The intervals of the mean difference, d_z and r over the datasets (or units)."""
        _, units, a, b, metric, _ = self.evidence_input
        return intervals_for_base(units, a, b, metric)

    @property
    def n_reps(self) -> int:
        """The fewest repetitions behind a dataset's pair of means."""
        return self.reps[0]

    def reps_span(self, joiner: str = " to ") -> str:
        """'20' when every dataset's pair of means has the same count, else 'fewest<joiner>most'."""
        low, high = self.reps
        return f"{low}" if low == high else f"{low}{joiner}{high}"

    def reps_text(self, a: str = "A", b: str = "B", metric: str = "r2") -> str:
        """How many repetitions each dataset's means are over, what was dropped, how cells were pooled."""
        dropped = self.dropped.sentence(a, b, METRIC_NAMES.get(metric, metric))
        return (
            f"each dataset's means over the {self.reps_span()} repetitions (splits) both models hold"
            + (f"; {dropped}" if dropped else "")
            + (f"; {self.pooled}" if self.pooled else "")
        )


@dataclass(frozen=True)
class WinRecord:
    """Datasets where B is better than, equal to or worse than A at the tables' printed precision
    (the papers count "outperforms on N datasets" this way); better is higher R², lower errors."""

    wins: tuple[str, ...]
    ties: tuple[str, ...]
    losses: tuple[str, ...]

    @classmethod
    def count(cls, table: pd.DataFrame, a: str, b: str, metric: str) -> WinRecord:
        sign = 1 if metric == "r2" else -1
        outcome = {"win": [], "tie": [], "loss": []}
        for row in table.dropna(subset=[a, b]).to_dict("records"):
            shown_a, shown_b = (float(format_value(row[m], metric)) for m in (a, b))
            key = "tie" if shown_a == shown_b else ("win" if sign * (shown_b - shown_a) > 0 else "loss")
            outcome[key].append(row["dataset"])
        return cls(tuple(outcome["win"]), tuple(outcome["tie"]), tuple(outcome["loss"]))

    def describe(self, a: str, b: str) -> str:
        where = "; ".join(
            f"{label} on {', '.join(names)}" for label, names in (("ties", self.ties), ("loses", self.losses)) if names
        )
        return (
            f"{b} better than {a} on {len(self.wins)} of {len(self.wins) + len(self.ties) + len(self.losses)}"
            f" datasets at the printed precision ({len(self.ties)} ties, {len(self.losses)} losses)"
            + (f": {where}" if where else "")
        )


@dataclass(frozen=True)
class ModelComparison:
    """B against A, as the papers compare a proposed model with a baseline (mean of B − A); every
    number of it as JSON is afr_cli.tables.compare.comparison_dict."""

    a: str
    b: str
    metric: str
    bases: list[BaseComparison]
    rope: float = DEFAULT_ROPE

    def holm_p(self) -> list[float]:
        """The t-test p of each base, Holm-adjusted over this comparison's bases (the family)."""
        return holm_adjust([c.ttest.p for c in self.bases])

    def tests_frame(self, holm: list[float] | None = None) -> pd.DataFrame:
        """One row per base: the t-test (raw and Holm-adjusted p; ``holm`` overrides the adjustment
        when the family is wider than this comparison), d_z, Wilcoxon with its rank-biserial
        correlation, the win/tie/loss count and the Bayesian signed-rank probabilities."""
        holm = self.holm_p() if holm is None else holm
        rows = []
        for c, p_holm in zip(self.bases, holm):
            probs = c.signed_rank.probabilities
            rows.append(
                {
                    "base": c.base,
                    "metric": self.metric,
                    "a": self.a,
                    "b": self.b,
                    "n": c.ttest.n,
                    "mean_diff": c.ttest.mean_diff,
                    "t": c.ttest.t,
                    "p": c.ttest.p,
                    "p_holm": p_holm,
                    "ci_low": c.ttest.ci_low,
                    "ci_high": c.ttest.ci_high,
                    "cohen_dz": c.effects.cohen_dz,
                    "wilcoxon_stat": c.wilcoxon[0],
                    "wilcoxon_p": c.wilcoxon[1],
                    "rank_biserial": c.effects.rank_biserial,
                    "wins": len(c.record.wins),
                    "ties": len(c.record.ties),
                    "losses": len(c.record.losses),
                    "rope": self.rope,
                    "p_a_better": probs.left,
                    "p_equivalent": probs.rope,
                    "p_b_better": probs.right,
                }
            )
        return pd.DataFrame(rows, columns=TEST_COLUMNS)
