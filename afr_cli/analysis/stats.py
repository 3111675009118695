"""Statistics the papers use to compare models over datasets (the check of their printed tests is
afr_cli/catalogue/printed_tests.py).

Demšar (2006) paired t-test, as in SAT-RF, LARF and AGBoost: per dataset d_i = A_i − B_i
(mean R² of two models), t = mean(d) / (sd(d)/√N) with N − 1 degrees of freedom, two-sided p,
95 % CI mean ± t_{0.975,N−1}·sd/√N. The Wilcoxon signed-rank test is given beside it.

No scipy.stats here (importing it costs more than pandas, on every ``afr table
--compare``): the t, chi² and F tails come from afr_cli.analysis.distributions (scipy.special), the ranks and
the Wilcoxon test from afr_cli.analysis.signed_rank, each the same floats scipy.stats gives. Only Nemenyi's
studentized range, which has no cheap equivalent, imports scipy.stats, inside ``nemenyi_cd``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from afr_cli.analysis.distributions import chi2_sf, f_sf, t_ppf, t_sf
from afr_cli.analysis.signed_rank import average_ranks, average_ranks_by_row, wilcoxon_signed_rank

CONSTANT_SD = 1e-9  # an sd of the differences at most this share of |mean| is floating-point rounding


@dataclass(frozen=True)
class TTestResult:
    """Paired t-test of a − b over n datasets: mean difference, t, two-sided p and 95 % CI."""

    n: int
    mean_diff: float
    t: float
    p: float
    ci_low: float
    ci_high: float


def paired_ttest(a: ArrayLike, b: ArrayLike) -> TTestResult:
    """Demšar's paired t-test of a − b (same-length sequences, one value per dataset).

    With sd(d) = 0 the test degenerates: t = 0, p = 1 if the mean is 0; with a non-zero mean and no
    spread (sd at most CONSTANT_SD·|mean|, rounding) t and p are undefined (NaN), never an infinite t
    with p = 0. With n < 2, or a NaN among the differences, t, p and the CI are NaN.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = int(d.size)
    mean = float(d.mean()) if n else math.nan
    if n < 2 or np.isnan(d).any():
        return TTestResult(n, mean, math.nan, math.nan, math.nan, math.nan)
    sd = float(d.std(ddof=1))
    if sd <= CONSTANT_SD * abs(mean):  # equal differences up to rounding: no spread to test against
        sd = 0.0
    se = sd / math.sqrt(n)
    if se == 0.0:
        t, p = (0.0, 1.0) if mean == 0.0 else (math.nan, math.nan)
    else:
        t = mean / se
        p = 2.0 * t_sf(abs(t), n - 1)
    half = t_ppf(0.975, n - 1) * se
    return TTestResult(n, mean, t, p, mean - half, mean + half)


def wilcoxon_test(a: ArrayLike, b: ArrayLike) -> tuple[float, float]:
    """Wilcoxon signed-rank test of a − b: (statistic, two-sided p), scipy.stats.wilcoxon's
    numbers (afr_cli.analysis.signed_rank).

    scipy cannot rank differences that are all zero; the two samples are then identical,
    so there is no evidence of a difference and we return (0.0, 1.0). NaN for n = 0.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return math.nan, math.nan
    if np.all(d == 0.0):
        return 0.0, 1.0
    return wilcoxon_signed_rank(d)


def holm_adjust(pvalues: ArrayLike) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, returned in the given order.

    Sorted ascending p_(1) <= ... <= p_(m), the adjusted p_(i) is max over j <= i of
    min(1, (m − j + 1) p_(j)): it controls the family-wise error rate without assuming the tests
    independent. A NaN p stays NaN and does not count in m."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, math.nan)
    finite = np.flatnonzero(~np.isnan(p))
    m = finite.size
    running = 0.0
    for rank, i in enumerate(finite[np.argsort(p[finite], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * float(p[i])))
        out[i] = running
    return [float(v) for v in out]


@dataclass(frozen=True)
class EffectSizes:
    """Effect sizes of a − b over datasets: Cohen's d_z = mean(d) / sd(d) (the paired t-test's
    standardised mean difference) and the matched-pairs rank-biserial correlation of the
    Wilcoxon test, (R+ − R−) / (R+ + R−) over the non-zero differences, in [−1, 1]."""

    cohen_dz: float
    rank_biserial: float


def effect_sizes(a: ArrayLike, b: ArrayLike) -> EffectSizes:
    """d_z and the rank-biserial correlation of a − b; NaN where undefined: both for a NaN among the
    differences; d_z for n < 2 or differences without spread (sd at most CONSTANT_SD·|mean|: equal
    up to rounding, where mean / sd would be that rounding's artefact, or infinite); the
    rank-biserial for no non-zero difference. Never infinite."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if np.isnan(d).any():
        return EffectSizes(math.nan, math.nan)
    if d.size < 2:
        dz = math.nan
    else:
        sd = float(d.std(ddof=1))
        mean = float(d.mean())
        dz = mean / sd if sd > CONSTANT_SD * abs(mean) else math.nan
    nonzero = d[d != 0.0]
    if nonzero.size == 0:
        rb = math.nan
    else:
        ranks = average_ranks(np.abs(nonzero))
        total = float(ranks.sum())
        rb = float(ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / total
    return EffectSizes(dz, rb)


def matches_printed(printed: str, value: float) -> bool:
    """True if ``value`` rounded (half up) to the printed number of decimals gives ``printed``."""
    shown = Decimal(printed)
    decimals = -shown.as_tuple().exponent
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return rounded == shown


# ---------------------------------------------------------------- Friedman + Nemenyi (Demšar 2006, sec. 3.2)


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman test of k models over n datasets and Nemenyi's critical difference of mean ranks."""

    models: tuple[str, ...]
    mean_ranks: tuple[float, ...]  # rank 1 = best on a dataset; ties share the mean rank
    n: int
    chi2: float
    p: float
    iman_davenport_f: float
    iman_davenport_p: float
    cd: float
    alpha: float

    def cliques(self) -> list[tuple[str, ...]]:
        """Maximal groups of models whose mean ranks lie within one CD of each other (the bars of
        a CD diagram): no significant difference inside a group."""
        order = sorted(range(len(self.models)), key=lambda i: self.mean_ranks[i])
        ranks = [self.mean_ranks[i] for i in order]
        groups = []
        for start in range(len(order)):
            end = start
            while end + 1 < len(order) and ranks[end + 1] - ranks[start] <= self.cd + 1e-12:
                end += 1
            if end > start and not any(s <= start and end <= e for s, e in groups):
                groups.append((start, end))
        return [tuple(self.models[order[i]] for i in range(s, e + 1)) for s, e in groups]


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference q_alpha sqrt(k(k+1)/(6n)), with q_alpha the studentized range
    quantile over sqrt(2) (Demšar's Table 5: 2.569 for k = 4 at alpha = 0.05)."""
    from scipy.stats import studentized_range  # here: nothing cheaper computes it, and only Friedman tables need it

    q = float(studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    return q * math.sqrt(k * (k + 1) / (6.0 * n))


def friedman_from_ranks(mean_ranks: ArrayLike, n: int, tie_factor: float = 1.0) -> tuple[float, float, float, float]:
    """Friedman's chi² (k − 1 df) and the Iman-Davenport F ((k − 1, (k − 1)(n − 1)) df) from mean
    ranks over n datasets: (chi2, p, F, p_F), as in Demšar (2006), eqs. for chi²_F and F_F.

    ``tie_factor`` (from ``friedman_tie_factor``, 1 when no dataset has tied scores) divides the
    statistic, the standard correction for ties that scipy's ``friedmanchisquare`` applies; the
    Iman-Davenport F is computed from the corrected chi². Over fewer than 2 datasets (or models)
    every value is NaN: the test is undefined there, never F = inf with p = 0."""
    r = np.asarray(mean_ranks, dtype=float)
    k = r.size
    if n < 2 or k < 2:  # one dataset (or one model): no spread of ranks to test, F has 0 df
        return math.nan, math.nan, math.nan, math.nan
    if tie_factor <= 0.0:  # every dataset ties every model: no evidence of a difference
        return 0.0, 1.0, 0.0, 1.0
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(r**2)) - k * (k + 1) ** 2 / 4.0) / tie_factor
    p = chi2_sf(chi2, k - 1)
    denom = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denom if denom > 0 else math.inf
    p_f = f_sf(f, k - 1, (k - 1) * (n - 1)) if math.isfinite(f) else 0.0
    return chi2, p, f, p_f


def friedman_tie_factor(scores: ArrayLike) -> float:
    """The Friedman statistic's tie correction 1 − Σ(t³ − t) / (n k (k² − 1)), summed over every
    group of t equal scores within a dataset (a row of the n × k ``scores``); 1 without ties.
    Published tables tie often at their printed precision, and ignoring it understates chi²."""
    scores = np.asarray(scores, dtype=float)
    n, k = scores.shape
    tied = 0.0
    for row in scores:
        _, counts = np.unique(row, return_counts=True)
        tied += float(np.sum(counts.astype(float) ** 3 - counts))
    return 1.0 - tied / (n * k * (k * k - 1.0))


def friedman_nemenyi(table: pd.DataFrame, higher_is_better: bool = True, alpha: float = 0.05) -> FriedmanResult:
    """Friedman test (corrected for ties) and Nemenyi CD over a datasets × models table of scores
    (rows with a missing value are dropped: every model must have a score on every dataset counted)."""
    table = table.dropna()
    scores = table.to_numpy(dtype=float)
    ranks = average_ranks_by_row(-scores if higher_is_better else scores)
    n, k = ranks.shape
    mean_ranks = ranks.mean(axis=0)
    chi2, p, f, p_f = friedman_from_ranks(mean_ranks, n, friedman_tie_factor(scores))
    return FriedmanResult(
        tuple(str(c) for c in table.columns),
        tuple(float(r) for r in mean_ranks),
        n,
        chi2,
        p,
        f,
        p_f,
        nemenyi_cd(k, n, alpha),
        alpha,
    )
