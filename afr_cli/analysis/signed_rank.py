"""Average ranks and the Wilcoxon signed-rank test, in numpy, giving scipy.stats' numbers.

It stands in for ``scipy.stats.wilcoxon`` and ``scipy.stats.rankdata``: importing scipy.stats costs
more CPU than pandas does, and ``afr table --compare`` would pay that on every call. This module follows
what ``scipy.stats.wilcoxon(d)`` does with its defaults (zero_method "wilcox": zero differences
dropped before ranking; no continuity correction; two-sided; method "auto"), so that the
statistic and p-value are the same floats (tests/test_signed_rank.py checks them against scipy):

- more than 50 differences: the normal approximation, with the tie correction of the variance;
- otherwise, no tie among the |d| and no zero: the exact null distribution of R+ (the sum of the
  ranks of the positive differences) over the 2**n equally likely sign patterns;
- otherwise, up to 13 differences: scipy's permutation test, which enumerates every sign pattern
  of the mid-ranks (exact); here the same count, from the distribution of the doubled mid-rank
  sums (integers), so no pattern is listed;
- otherwise the normal approximation.

Every exact probability is a count over 2**n with n <= 50, which a double holds exactly, as it
holds every partial sum of them: the p-values do not depend on the order of the additions.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from afr_cli.analysis.distributions import normal_sf

EXACT_MAX_N = 50  # scipy's "auto": above this many differences, the normal approximation
PERMUTATION_MAX_N = 13  # with ties or zeros, scipy enumerates the sign patterns up to this many


def average_ranks(x: ArrayLike) -> np.ndarray:
    """Ranks 1..n of a 1-D array, tied values sharing the mean of their ranks; all NaN when any
    value is NaN: ``scipy.stats.rankdata(x)`` (method "average", nan_policy "propagate")."""
    x = np.asarray(x, dtype=float)
    if np.isnan(x).any():
        return np.full(x.shape, math.nan)
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(starts, x.size))
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(starts + 1 + (counts - 1) / 2, counts)
    return ranks


RANK_CHUNK = 4_000_000  # comparisons held at once when ranking many rows (a bootstrap's resamples)


def average_ranks_by_row(x: ArrayLike) -> np.ndarray:
    """``average_ranks`` of each row of a 2-D array: ``scipy.stats.rankdata(x, axis=1)``, a row
    holding a NaN all NaN. Vectorized for the many rows of a bootstrap: a value's rank is the count
    of smaller values plus the mean position among the equal ones, over blocks of rows so that at
    most ``RANK_CHUNK`` comparisons are held at once."""
    x = np.asarray(x, dtype=float)
    step = max(1, RANK_CHUNK // max(1, x.shape[1] ** 2))
    ranks = np.empty(x.shape)
    for start in range(0, x.shape[0], step):
        block = x[start : start + step]
        below = (block[:, None, :] < block[:, :, None]).sum(axis=-1)
        equal = (block[:, None, :] == block[:, :, None]).sum(axis=-1)
        ranks[start : start + step] = below + (equal + 1) / 2.0
    ranks[np.isnan(x).any(axis=1)] = math.nan
    return ranks


def sum_counts(weights: ArrayLike) -> np.ndarray:
    """How many of the 2**len(weights) subsets of the non-negative integer ``weights`` sum to
    each total 0..sum(weights): the null distribution of a signed-rank sum, counted (each
    weight joins a subset or not, one per sign). Float counts, exact below 2**53."""
    counts = np.ones(1)
    for w in (int(v) for v in weights):
        grown = np.zeros(counts.size + w)
        grown[: counts.size] += counts
        grown[w:] += counts
        counts = grown
    return counts


def _exact_p(r_plus: float, n: int) -> float:
    """Two-sided exact p of R+ = ``r_plus`` with ranks 1..n: twice the smaller tail, at most 1."""
    pmf = sum_counts(range(1, n + 1)) / 2.0**n
    k = int(r_plus)
    lower = float(pmf[: k + 1].sum())  # P(R+ <= k)
    upper = float(pmf[k:].sum())  # P(R+ >= k)
    return min(1.0, 2.0 * min(lower, upper))


def _permutation_p(ranks: np.ndarray, r_plus: float) -> float:
    """Two-sided p of R+ = ``r_plus`` over every sign pattern of the mid-``ranks`` (halves at
    most): the share of patterns with R+ at or below it, and at or above it; twice the smaller."""
    doubled = np.rint(2 * ranks).astype(int)
    counts = sum_counts(doubled)
    k = int(round(2 * r_plus))
    total = 2.0**ranks.size
    return min(1.0, 2.0 * min(float(counts[: k + 1].sum()) / total, float(counts[k:].sum()) / total))


def _normal_p(ranks: np.ndarray, r_plus: float) -> float:
    """Two-sided p of the normal approximation to R+, the variance corrected for tied |d|."""
    count = float(ranks.size)
    mean = count * (count + 1.0) * 0.25
    _, tied = np.unique(ranks, return_counts=True)
    tie_correct = float(np.sum(tied.astype(float) ** 3 - tied))
    se = math.sqrt((count * (count + 1.0) * (2.0 * count + 1.0) - tie_correct / 2) / 24)
    z = (r_plus - mean) / se if se > 0 else math.nan
    return 2 * normal_sf(abs(z))


def wilcoxon_signed_rank(d: ArrayLike) -> tuple[float, float]:
    """Wilcoxon signed-rank test of the paired differences ``d``: (min(R+, R−), two-sided p),
    as ``scipy.stats.wilcoxon(d)`` gives them (module docstring); NaN for an empty ``d`` or one
    holding NaN."""
    d = np.asarray(d, dtype=float).ravel()
    if d.size == 0 or np.isnan(d).any():
        return math.nan, math.nan
    nonzero = d[d != 0.0]
    ranks = average_ranks(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    statistic = min(r_plus, r_minus)
    ties = nonzero.size > np.unique(np.abs(nonzero)).size
    if d.size > EXACT_MAX_N:
        return statistic, _normal_p(ranks, r_plus)
    if not ties and nonzero.size == d.size:
        return statistic, _exact_p(r_plus, d.size)
    if d.size <= PERMUTATION_MAX_N:
        return statistic, _permutation_p(ranks, r_plus)
    return statistic, _normal_p(ranks, r_plus)
