"""afr_cli.analysis.signed_rank gives scipy.stats' Wilcoxon statistic and p-value, and its ranks, as the
same floats: every branch of scipy's method "auto" (exact; the permutation test with ties or
zeros up to 13 differences; the normal approximation beyond), ties, zeros, NaN."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from afr_cli.analysis.signed_rank import (
    EXACT_MAX_N,
    PERMUTATION_MAX_N,
    average_ranks,
    average_ranks_by_row,
    sum_counts,
    wilcoxon_signed_rank,
)


def scipy_wilcoxon(d: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about ties and zeros; the numbers are the point
        res = sps.wilcoxon(d)
    return float(res.statistic), float(res.pvalue)


def same(ours: tuple[float, float], ref: tuple[float, float]) -> bool:
    return all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(ours, ref))


def differences(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """n differences: distinct ("plain"), rounded so |d| ties ("ties"), some exactly zero
    ("zeros"), or both, at a random shift so that p spans (0, 1]."""
    d = rng.normal(rng.choice([0.0, 0.3, 1.0]), 1.0, n)
    if kind in ("ties", "both"):
        d = np.round(d, 1) + 0.0
        d[d == 0] = 0.1
    if kind in ("zeros", "both"):
        d[rng.choice(n, size=max(1, n // 4), replace=False)] = 0.0
    return d


@pytest.mark.parametrize("kind", ["plain", "ties", "zeros", "both"])
def test_wilcoxon_equals_scipy_for_every_size_and_branch(kind):
    rng = np.random.default_rng(["plain", "ties", "zeros", "both"].index(kind))
    # scipy's permutation test takes seconds at 12-13 differences: those sizes once, in the test below
    sizes = [*range(1, 10), 14, 15, 20, 27, 33, 41, 49, 50, 51, 60, 75, 120, 199]
    if kind == "plain":
        sizes = [*range(1, 61), 75, 120, 199]  # exact up to 50: cheap in scipy too
    for n in sizes:
        for _ in range(4 if n <= 20 else 2):
            d = differences(rng, n, kind)
            if not np.any(d):
                continue
            assert same(wilcoxon_signed_rank(d), scipy_wilcoxon(d)), (kind, n, d.tolist())


def test_the_branches_are_the_ones_scipy_takes():
    # n = 13 with a tie: the permutation test; 14: the normal approximation (p differs between them)
    d13 = np.array([1, -2, 3, 4, 0, 6, 7, 8, 9, 10, 11, 12, 12.0])
    assert same(wilcoxon_signed_rank(d13), scipy_wilcoxon(d13))
    d14 = np.append(d13, 13.0)
    assert same(wilcoxon_signed_rank(d14), scipy_wilcoxon(d14))
    assert sps.wilcoxon(d14, method="asymptotic").pvalue == scipy_wilcoxon(d14)[1]
    assert PERMUTATION_MAX_N == 13 and EXACT_MAX_N == 50
    # 50 distinct differences: exact; 51: the normal approximation
    for n in (50, 51):
        d = np.arange(1.0, n + 1) * np.where(np.arange(n) % 3 == 0, -1, 1)
        assert same(wilcoxon_signed_rank(d), scipy_wilcoxon(d)), n


def test_wilcoxon_exact_tails_and_extremes_equal_scipy():
    for n in (1, 2, 5, 12, 30, 50):
        up = np.arange(1.0, n + 1)
        for d in (up, -up, up * np.where(np.arange(n) < n // 2, -1, 1)):
            assert same(wilcoxon_signed_rank(d), scipy_wilcoxon(d)), d.tolist()


def test_wilcoxon_all_zero_small_sample_and_nan_as_scipy():
    for d in (np.zeros(5), np.array([0.0, 0.0, 0.2]), np.array([0.1, math.nan, 0.3])):
        assert same(wilcoxon_signed_rank(d), scipy_wilcoxon(d)), d.tolist()
    assert all(math.isnan(v) for v in wilcoxon_signed_rank([]))


def test_average_ranks_equal_scipy_rankdata():
    rng = np.random.default_rng(7)
    for n in range(0, 40):
        x = np.round(rng.normal(0, 1, n), int(rng.integers(0, 3)))
        assert np.array_equal(average_ranks(x), sps.rankdata(x))
    with_nan = np.array([0.3, math.nan, 0.1])
    assert np.array_equal(average_ranks(with_nan), sps.rankdata(with_nan), equal_nan=True)
    table = np.round(rng.normal(0, 1, (9, 5)), 1)
    table[2, 3] = math.nan
    assert np.array_equal(average_ranks_by_row(table), sps.rankdata(table, axis=1), equal_nan=True)


def test_sum_counts_counts_every_subset():
    weights = [1, 2, 2, 3, 5]
    brute = np.zeros(sum(weights) + 1)
    for signs in itertools.product((0, 1), repeat=len(weights)):
        brute[sum(w for w, s in zip(weights, signs) if s)] += 1
    assert np.array_equal(sum_counts(weights), brute)
    assert sum_counts([]).tolist() == [1.0]
