"""The evidence `afr table --compare` adds to each base beyond the papers' tests:

- the hierarchical Bayesian test over datasets × repetitions (afr_cli/analysis/hierarchical.py),
  run on every repetition both models hold, one row of differences per dataset (or per unit,
  where cells share a split), with ρ = n_test / n of each split;
- an interval on every effect over the datasets (afr_cli/analysis/effect_intervals.py): the mean
  difference, d_z and the rank-biserial r, with magnitude labels and their source;
- for an error metric (MAE, RMSE), whose scale differs from dataset to dataset, the relative
  form: the hierarchical test runs on the log ratio ln(A's error / B's error) per repetition with
  a relative ROPE (±rope as a fraction of the error), the mean log ratio ln(B/A) over the
  datasets gets its own interval, and the datasets that dominate the raw mean difference are
  named.

Each piece is either a result or the sentence saying why it does not apply (never a NaN). Every
test is memoized in the export cache (afr_cli/tables/compare_memo.py), as compare.py's are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from afr_cli.analysis.effect_intervals import EffectIntervals, Interval, effect_intervals, mean_diff_interval
from afr_cli.analysis.hierarchical import HierarchicalResult
from afr_cli.tables.compare_memo import memo_hierarchical_test, memoized

# Sampler size for a comparison: each base costs about 0.4 s of CPU at this size (a report has up
# to 19 bases per comparison file), and the Monte Carlo error of each probability is printed with it.
COMPARE_SAMPLES = 3000
COMPARE_BURN_IN = 500
COMPARE_SEED = 0
DEFAULT_RHO = 0.2  # n_test / n when a store has no recorded split (the papers' 80/20)
DOMINANT_SHARE = 0.5  # datasets carrying more than half of Σ|B − A| ...
DOMINANT_FEW = 1 / 3  # ... while being at most a third of the datasets dominate the raw mean
ERROR_METRICS = ("mae", "rmse")


def mc_text(error: float) -> str:
    """A Monte Carlo error as printed: '≤ 0.004', or '< 0.001' when it rounds to 0."""
    return "< 0.001" if error < 0.0005 else f"≤ {error:.3f}"


def direction(metric: str) -> str:
    """'higher is better' for R², 'lower is better' for an error metric."""
    return "higher is better" if metric == "r2" else "lower is better"


@dataclass(frozen=True)
class Hierarchical:
    """The hierarchical test of one base, or why it does not apply (``result`` None, ``reason``).

    ``relative``: run on log ratios of an error metric, ROPE ±``rope`` as a fraction of the
    error (log half-width ln(1 + rope)); otherwise on B − A in the metric's unit, ROPE ±``rope``.
    ``left_out``: datasets with fewer than two repetitions both models hold."""

    result: HierarchicalResult | None
    reason: str
    relative: bool
    rope: float
    left_out: tuple[str, ...] = ()

    def rope_text(self, metric_name: str) -> str:
        if self.relative:
            return f"±{100 * self.rope:g} % of A's {metric_name} (relative: |ln(A/B)| ≤ ln(1 + {self.rope:g}))"
        return f"±{self.rope:g} {metric_name}"

    def mc_error(self) -> float:
        """The largest Monte Carlo standard error of the three probabilities."""
        se = self.result.mc_se
        return max(se.left, se.rope, se.right)

    def as_dict(self, metric_name: str) -> dict:
        out = {
            "applicable": self.result is not None,
            "rope": self.rope,
            "rope_relative": self.relative,
            "rope_text": self.rope_text(metric_name),
            "scale": "ln(a / b) per repetition (b better is right)" if self.relative else "b - a per repetition",
            "left_out": list(self.left_out),
        }
        if self.result is None:
            return {**out, "reason": self.reason}
        r = self.result
        mean, low, high = (-r.mean, -r.ci_high, -r.ci_low) if self.relative else (r.mean, r.ci_low, r.ci_high)
        return {
            **out,
            "model": "Corani et al. 2017 (baycomp's hierarchical-t-test.stan), seeded Gibbs sampler",
            "n_datasets": r.n_datasets,
            "repetitions": list(r.repetitions),
            "samples": r.samples,
            "burn_in": r.burn_in,
            "seed": r.seed,
            "p_a_better": r.probabilities.left,
            "p_equivalent": r.probabilities.rope,
            "p_b_better": r.probabilities.right,
            "p_meaning": "region shares: the share of posterior draws in which the region holds the most "
            "predictive mass of the next dataset (baycomp's rule), not the probability of an event",
            "population_mean": {
                "p_a_better": r.population.left,
                "p_equivalent": r.population.rope,
                "p_b_better": r.population.right,
            },
            "next_dataset": {
                "p_a_better": r.predictive.left,
                "p_equivalent": r.predictive.rope,
                "p_b_better": r.predictive.right,
            },
            "mc_se": {"p_a_better": r.mc_se.left, "p_equivalent": r.mc_se.rope, "p_b_better": r.mc_se.right},
            "mean_difference": {
                "of": "ln(b / a)" if self.relative else "b - a",
                "mean": mean,
                "mc_se": r.mean_mc_se,
                "ci_low": low,
                "ci_high": high,
                "level": r.level,
            },
        }


def hierarchical_for_base(rows: pd.DataFrame, a: str, b: str, metric: str, rope: float) -> Hierarchical:
    """The hierarchical test of B against A on one base's paired rows (every repetition both
    hold; a ``split_unit`` column pools cells sharing a split: their per-repetition mean)."""
    relative = metric in ERROR_METRICS
    if a not in set(rows["model"]) or b not in set(rows["model"]):
        return Hierarchical(None, "no repetition both models hold", relative, rope)
    keys = ["dataset", "rep"]
    wide = rows.pivot_table(index=keys, columns="model", values=metric)[[a, b]].dropna().reset_index()
    if relative:
        if (wide[[a, b]] <= 0).to_numpy().any():
            return Hierarchical(
                None, f"an error of 0 has no log ratio (the relative form needs {metric} > 0)", relative, rope
            )
        wide["x"] = np.log(wide[a] / wide[b])  # > 0: B's error is lower, B better
    else:
        wide["x"] = wide[b] - wide[a]
    firsts = rows.drop_duplicates("dataset").set_index("dataset")
    unit_of = firsts["split_unit"] if "split_unit" in rows else None
    rho_of = firsts["test_fraction"] if "test_fraction" in rows else None
    if unit_of is not None:
        wide = wide.assign(
            rho=wide["dataset"].map(rho_of) if rho_of is not None else DEFAULT_RHO, dataset=wide["dataset"].map(unit_of)
        )
        wide = wide.groupby(keys, sort=False)[["x", "rho"]].mean().reset_index()
    else:
        wide["rho"] = wide["dataset"].map(rho_of).astype(float) if rho_of is not None else DEFAULT_RHO
    wide["rho"] = wide["rho"].fillna(DEFAULT_RHO)
    groups = [(str(d), g) for d, g in wide.groupby("dataset", sort=False)]
    left_out = tuple(d for d, g in groups if len(g) < 2)
    kept = [(d, g) for d, g in groups if len(g) >= 2]
    if len(kept) < 2:
        why = f"it needs at least 2 datasets, each with at least 2 repetitions both models hold; here {len(kept)}"
        return Hierarchical(None, why, relative, rope, left_out)
    rope_scale = math.log1p(rope) if relative else rope
    try:
        result = memo_hierarchical_test(
            [g["x"].to_numpy() for _, g in kept],
            [float(g["rho"].iloc[0]) for _, g in kept],
            rope_scale,
            COMPARE_SAMPLES,
            COMPARE_BURN_IN,
            COMPARE_SEED,
        )
    except ValueError as exc:
        return Hierarchical(None, str(exc), relative, rope, left_out)
    return Hierarchical(result, "", relative, rope, left_out)


@dataclass(frozen=True)
class Intervals:
    """The effect intervals of B − A over one base's datasets (``effects``), or why not
    (``reason``); for an error metric also the interval of the mean log ratio ln(B/A) and the
    datasets dominating the raw mean difference."""

    effects: EffectIntervals | None
    reason: str
    log_ratio: Interval | None = None
    dominant: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        if self.effects is None:
            return {"applicable": False, "reason": self.reason}
        e = self.effects
        out = {
            "applicable": True,
            "of": "b - a",
            "n": e.n,
            "mean_diff": _interval_dict(e.mean_diff),
            "cohen_dz": {
                **_interval_dict(e.cohen_dz.interval),
                "label": e.cohen_dz.label,
                "label_source": e.cohen_dz.label_source,
            },
            "rank_biserial": {
                **_interval_dict(e.rank_biserial.interval),
                "label": e.rank_biserial.label,
                "label_source": e.rank_biserial.label_source,
            },
        }
        if self.log_ratio is not None:
            out["relative"] = {
                "of": "ln(b / a) per dataset",
                **_interval_dict(self.log_ratio),
                "ratio": math.exp(self.log_ratio.estimate),
                "ratio_low": math.exp(self.log_ratio.low),
                "ratio_high": math.exp(self.log_ratio.high),
            }
            out["dominated_by"] = list(self.dominant)
        return out


def _interval_dict(i: Interval) -> dict:
    return {"estimate": i.estimate, "low": i.low, "high": i.high, "level": i.level, "method": i.method}


def intervals_for_base(both: pd.DataFrame, a: str, b: str, metric: str) -> Intervals:
    """Intervals of B − A over the rows of ``both`` (one per dataset or unit: columns a, b,
    and ``dataset`` or ``unit``)."""
    n = len(both)
    if n < 2:
        return Intervals(None, f"an interval over datasets needs at least 2 datasets; here {n}")
    effects = memoized(effect_intervals, both[b], both[a])
    if metric not in ERROR_METRICS:
        return Intervals(effects, "")
    values = both[[a, b]].to_numpy(dtype=float)
    positive = (values > 0).all()
    log_ratio = memoized(mean_diff_interval, np.log(values[:, 1]), np.log(values[:, 0])) if positive else None
    names = both["dataset" if "dataset" in both else "unit"].astype(str).tolist()
    return Intervals(effects, "", log_ratio, dominant_datasets(names, values[:, 1] - values[:, 0]))


def dominant_datasets(names: list[str], diffs: np.ndarray) -> tuple[str, ...]:
    """The fewest datasets whose |B − A| together exceed DOMINANT_SHARE of Σ|B − A|, when they are
    at most DOMINANT_FEW of the datasets (a raw mean then mostly reports them); else ()."""
    size = np.abs(np.asarray(diffs, dtype=float))
    total = float(size.sum())
    if len(names) < 2 or total == 0.0:
        return ()
    order = np.argsort(-size, kind="stable")
    share, picked = 0.0, []
    for i in order:
        picked.append(names[i])
        share += float(size[i]) / total
        if share > DOMINANT_SHARE:
            break
    return tuple(picked) if len(picked) <= DOMINANT_FEW * len(names) else ()


def dominance_warning(
    a: str, b: str, metric_name: str, base: str, intervals: Intervals, per_dataset: pd.DataFrame
) -> str | None:
    """The one-line warning of an error metric's raw mean difference dominated by a few datasets."""
    if not intervals.dominant:
        return None
    diffs = per_dataset.set_index("dataset")[f"{b} − {a}"]
    where = ", ".join(f"{d} ({diffs[d]:+.4g})" if d in diffs.index else d for d in intervals.dominant)
    rel = intervals.log_ratio
    tail = (
        f"; the relative form, ln({b}/{a}) per dataset, is {rel.estimate:+.4f} (ratio {math.exp(rel.estimate):.3f})"
        if rel is not None
        else ""
    )
    return (
        f"warning: base {base}: the mean {b} − {a} {metric_name} over datasets of different scales is dominated "
        f"by {where}{tail}"
    )
