"""Intervals and magnitude labels for the effects of a paired comparison over datasets.

The point effects are those of :func:`afr_cli.analysis.stats.effect_sizes` (differences d = a − b, one per
dataset); this module adds an interval to each, so a printed effect says how well the data pin it:

- the mean difference: the paired t interval, mean ± t_{1−α/2, n−1}·sd/√n (closed form);
- Cohen's d_z = mean(d)/sd(d): the exact interval from the noncentral t. t = d_z·√n follows
  nct(n − 1, δ·√n), so the bounds are the noncentralities at which the observed t sits at the
  1 − α/2 and α/2 quantiles, divided by √n (Steiger and Fouladi 1997: inverting the CDF in its
  noncentrality, which is monotone);
- the matched-pairs rank-biserial r = (R+ − R−)/(R+ + R−) over the non-zero differences (Kerby
  2014): no closed form, so a seeded percentile bootstrap over datasets (resampling whole
  datasets, their differences paired).

Magnitude labels, each with its source: d_z by Cohen (1988, ch. 2) for d — |d| < 0.2 negligible,
< 0.5 small, < 0.8 medium, else large (applied to d_z unchanged, though d_z, standardised by the
sd of the differences, is not the between-groups d those benchmarks were set for: Lakens 2013);
r by Cohen's (1988, ch. 3) thresholds for a correlation — |r| < 0.1 negligible, < 0.3 small,
< 0.5 medium, else large (the rank-biserial r is a correlation, between the sign of a difference
and its rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afr_cli.analysis.distributions import t_ppf
from afr_cli.analysis.signed_rank import average_ranks_by_row
from afr_cli.analysis.stats import CONSTANT_SD

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
D_THRESHOLDS = (0.2, 0.5, 0.8)  # Cohen (1988), ch. 2: small, medium, large d
R_THRESHOLDS = (0.1, 0.3, 0.5)  # Cohen (1988), ch. 3: small, medium, large r
D_LABEL_SOURCE = "Cohen (1988) for d: |d| < 0.2 negligible, < 0.5 small, < 0.8 medium, else large"
R_LABEL_SOURCE = "Cohen (1988) for a correlation r: |r| < 0.1 negligible, < 0.3 small, < 0.5 medium, else large"
_LABELS = ("negligible", "small", "medium", "large")


@dataclass(frozen=True)
class Interval:
    """A point estimate with its ``level`` interval and how the interval was made."""

    estimate: float
    low: float
    high: float
    level: float
    method: str


@dataclass(frozen=True)
class LabelledEffect:
    """An effect's interval with its magnitude label (of the point estimate) and the label's source."""

    interval: Interval
    label: str
    label_source: str


@dataclass(frozen=True)
class EffectIntervals:
    """Every effect of a − b over ``n`` datasets with its interval: the mean difference, d_z and r."""

    n: int
    mean_diff: Interval
    cohen_dz: LabelledEffect
    rank_biserial: LabelledEffect


def magnitude(value: float, thresholds: tuple[float, float, float]) -> str:
    """The label of |value| against (small, medium, large) thresholds; "undefined" for NaN."""
    if math.isnan(value):
        return "undefined"
    return _LABELS[sum(abs(value) >= t for t in thresholds)]


def _differences(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
    return a - b


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def mean_diff_interval(a: ArrayLike, b: ArrayLike, level: float = 0.95) -> Interval:
    """The paired t interval of mean(a − b); NaN bounds for n < 2, a point for sd = 0."""
    _check_level(level)
    d = _differences(a, b)
    n = d.size
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return Interval(mean, math.nan, math.nan, level, "paired t")
    half = t_ppf(0.5 + level / 2.0, n - 1) * float(d.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, level, "paired t")


def dz_interval(a: ArrayLike, b: ArrayLike, level: float = 0.95) -> Interval:
    """Cohen's d_z of a − b with its exact noncentral-t interval. NaN (no interval) for n < 2, a NaN
    difference, or differences without spread (sd = 0, or at most CONSTANT_SD·|mean|: rounding),
    never infinite; where scipy's noncentral t is NaN (|t| in the thousands), the
    large-sample normal interval, so named in ``method``."""
    from scipy.optimize import brentq
    from scipy.special import nctdtr  # the noncentral t CDF, nctdtr(df, nc, t): no scipy.stats import

    _check_level(level)
    d = _differences(a, b)
    n = d.size
    method = "noncentral t"
    if n < 2 or np.isnan(d).any():
        return Interval(math.nan, math.nan, math.nan, level, method)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd <= CONSTANT_SD * abs(mean):  # equal differences up to rounding: d_z is that rounding's artefact
        return Interval(math.nan, math.nan, math.nan, level, method)
    dz = mean / sd
    t_obs, df, root_n = dz * math.sqrt(n), n - 1, math.sqrt(n)
    alpha = 1.0 - level

    def noncentrality(target: float) -> float:
        # nct.cdf(t_obs, df, nc) falls from 1 to 0 as nc grows; bracket the root around t_obs in
        # steps of the noncentrality's large-sample sd (wide steps reach nc where scipy's nct is NaN)
        f = lambda nc: float(nctdtr(df, nc, t_obs)) - target  # noqa: E731
        step = math.sqrt(1.0 + t_obs**2 / (2.0 * df))
        lo, hi = t_obs - 2.0 * step, t_obs + 2.0 * step
        while f(lo) < 0.0:
            lo -= step
            step *= 2.0
        while f(hi) > 0.0:
            hi += step
            step *= 2.0
        return float(brentq(f, lo, hi, xtol=1e-12, rtol=1e-12))

    try:
        low = noncentrality(1.0 - alpha / 2.0) / root_n
        high = noncentrality(alpha / 2.0) / root_n
    except ValueError:  # scipy's nct is NaN this far out: the large-sample normal interval instead
        from scipy.special import ndtri

        half = float(ndtri(0.5 + level / 2.0)) * math.sqrt(1.0 / n + dz**2 / (2.0 * df))
        return Interval(dz, dz - half, dz + half, level, "normal approximation (noncentral t not computable)")
    return Interval(dz, low, high, level, method)


def _rank_biserial_rows(d: np.ndarray) -> np.ndarray:
    """The matched-pairs rank-biserial r of each row of ``d`` (NaN for a row of zeros): zeros are
    dropped and the others ranked by |d| with ties averaged, as the Wilcoxon test does."""
    ranks = average_ranks_by_row(np.abs(d))  # zeros take the lowest ranks ...
    zeros = (d == 0.0).sum(axis=-1, keepdims=True)
    ranks = ranks - zeros  # ... so the non-zero ones, shifted down by the count of zeros, rank among themselves
    signed = (np.sign(d) * ranks).sum(axis=-1)
    total = np.where(d != 0.0, ranks, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, signed / np.where(total > 0, total, 1.0), math.nan)


def rank_biserial_interval(
    a: ArrayLike, b: ArrayLike, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Interval:
    """The matched-pairs rank-biserial r of a − b with a seeded percentile-bootstrap interval
    (datasets resampled with replacement; resamples whose differences are all zero, where r is
    undefined, are left out). NaN for no non-zero difference; the same seed gives the same bounds."""
    _check_level(level)
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    d = _differences(a, b)
    method = f"percentile bootstrap ({resamples} resamples, seed {seed})"
    r = float(_rank_biserial_rows(d[None, :])[0]) if d.size else math.nan
    if math.isnan(r):
        return Interval(math.nan, math.nan, math.nan, level, method)
    picks = np.random.default_rng(seed).integers(0, d.size, size=(resamples, d.size))
    boot = _rank_biserial_rows(d[picks])
    boot = boot[~np.isnan(boot)]
    low, high = np.quantile(boot, [0.5 - level / 2.0, 0.5 + level / 2.0])
    return Interval(r, float(low), float(high), level, method)


def effect_intervals(
    a: ArrayLike, b: ArrayLike, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> EffectIntervals:
    """Every effect of a − b (one value per dataset) with its ``level`` interval and labels."""
    dz = dz_interval(a, b, level)
    r = rank_biserial_interval(a, b, level, resamples, seed)
    return EffectIntervals(
        n=int(_differences(a, b).size),
        mean_diff=mean_diff_interval(a, b, level),
        cohen_dz=LabelledEffect(dz, magnitude(dz.estimate, D_THRESHOLDS), D_LABEL_SOURCE),
        rank_biserial=LabelledEffect(r, magnitude(r.estimate, R_THRESHOLDS), R_LABEL_SOURCE),
    )
