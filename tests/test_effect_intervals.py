"""Intervals on every effect of a paired comparison (afr_cli/analysis/effect_intervals.py):
the mean difference's t interval, d_z's exact noncentral-t interval, the rank-biserial r's seeded
bootstrap interval, and the magnitude labels with their sources."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from afr_cli.analysis.effect_intervals import (
    D_THRESHOLDS,
    R_THRESHOLDS,
    dz_interval,
    effect_intervals,
    magnitude,
    mean_diff_interval,
    rank_biserial_interval,
)
from afr_cli.analysis.stats import effect_sizes, paired_ttest

RNG = np.random.default_rng(34)
A = RNG.normal(0.80, 0.05, 12)
B = A - RNG.normal(0.02, 0.04, 12)


def test_the_points_are_the_printed_effects_and_the_mean_interval_is_the_t_tests():
    e = effect_intervals(A, B)
    sizes, t = effect_sizes(A, B), paired_ttest(A, B)
    assert e.n == 12
    assert e.cohen_dz.interval.estimate == pytest.approx(sizes.cohen_dz, rel=1e-12)
    assert e.rank_biserial.interval.estimate == pytest.approx(sizes.rank_biserial, rel=1e-12)
    assert (e.mean_diff.estimate, e.mean_diff.low, e.mean_diff.high) == pytest.approx(
        (t.mean_diff, t.ci_low, t.ci_high), rel=1e-12
    )


def test_dz_bounds_put_the_observed_t_at_the_tail_quantiles_of_the_noncentral_t():
    iv = dz_interval(A, B, level=0.90)
    d = A - B
    n = d.size
    t_obs = d.mean() / d.std(ddof=1) * math.sqrt(n)
    assert sps.nct.cdf(t_obs, n - 1, iv.low * math.sqrt(n)) == pytest.approx(0.95, abs=1e-9)
    assert sps.nct.cdf(t_obs, n - 1, iv.high * math.sqrt(n)) == pytest.approx(0.05, abs=1e-9)
    assert iv.low < iv.estimate < iv.high


def test_dz_interval_touches_zero_at_the_level_of_the_t_tests_p():
    # with noncentrality 0 the noncentral t is Student's t: the (1 − p) interval ends exactly at 0
    p = paired_ttest(A, B).p
    iv = dz_interval(A, B, level=1.0 - p)
    assert min(abs(iv.low), abs(iv.high)) == pytest.approx(0.0, abs=1e-8)
    assert (iv.low > 0) == (dz_interval(A, B, 0.95).low > 0) == (p < 0.05)


def test_dz_interval_matches_the_large_sample_normal_approximation():
    # Hedges and Olkin: se(d) ≈ sqrt(1/n + d²/(2n)) for large n
    rng = np.random.default_rng(1)
    d = rng.normal(0.5, 1.0, 4000)
    iv = dz_interval(d, np.zeros_like(d))
    se = math.sqrt(1 / d.size + iv.estimate**2 / (2 * d.size))
    assert iv.low == pytest.approx(iv.estimate - 1.959964 * se, abs=2e-3)
    assert iv.high == pytest.approx(iv.estimate + 1.959964 * se, abs=2e-3)


def test_dz_degenerate_cases():
    assert all(math.isnan(v) for v in (dz_interval([1.0], [0.0]).estimate, dz_interval([1.0], [0.0]).low))
    constant = dz_interval([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert math.isnan(constant.estimate) and math.isnan(constant.low) and math.isnan(constant.high)
    assert math.isnan(dz_interval([1.0, 2.0], [1.0, 2.0]).estimate)


def _rank_biserial_by_hand(d: np.ndarray) -> float:
    nonzero = d[d != 0]
    ranks = sps.rankdata(np.abs(nonzero))
    return float(ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / float(ranks.sum())


def test_rank_biserial_bootstrap_is_seeded_and_agrees_with_scipy_bootstrap():
    first = rank_biserial_interval(A, B, seed=7)
    assert first == rank_biserial_interval(A, B, seed=7)
    reference = sps.bootstrap(
        (A - B,),
        _rank_biserial_by_hand,
        vectorized=False,
        n_resamples=2000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(3),
    )
    # two independent percentile bootstraps of 10,000 and 2,000 resamples: the 2.5 % and 97.5 %
    # quantiles of a statistic on a grid of step 1/39 (12 ranks) agree within a grid step or two
    assert first.low == pytest.approx(reference.confidence_interval.low, abs=0.06)
    assert first.high == pytest.approx(reference.confidence_interval.high, abs=0.06)


def test_rank_biserial_rows_drop_zeros_as_the_wilcoxon_test_does():
    d = np.array([0.0, 0.3, -0.1, 0.0, 0.2, -0.3, 0.5])
    iv = rank_biserial_interval(d, np.zeros_like(d), resamples=200)
    assert iv.estimate == pytest.approx(_rank_biserial_by_hand(d))
    assert iv.estimate == pytest.approx(effect_sizes(d, np.zeros_like(d)).rank_biserial)


def test_rank_biserial_interval_when_every_difference_has_one_sign():
    iv = rank_biserial_interval([3.0, 2.0, 5.0], [1.0, 1.0, 1.0])
    assert (iv.estimate, iv.low, iv.high) == (1.0, 1.0, 1.0)
    none = rank_biserial_interval([1.0, 2.0], [1.0, 2.0])
    assert math.isnan(none.estimate) and math.isnan(none.low)


def test_magnitude_labels_at_cohens_thresholds():
    assert [magnitude(v, D_THRESHOLDS) for v in (0.19, -0.2, 0.49, 0.5, -0.79, 0.8, math.inf)] == [
        "negligible",
        "small",
        "small",
        "medium",
        "medium",
        "large",
        "large",
    ]
    assert [magnitude(v, R_THRESHOLDS) for v in (0.09, 0.1, -0.3, 0.5)] == ["negligible", "small", "medium", "large"]
    assert magnitude(math.nan, R_THRESHOLDS) == "undefined"
    e = effect_intervals(A, B)
    assert "Cohen (1988)" in e.cohen_dz.label_source and "Cohen (1988)" in e.rank_biserial.label_source
    assert e.cohen_dz.label == magnitude(e.cohen_dz.interval.estimate, D_THRESHOLDS)


def test_bad_input():
    with pytest.raises(ValueError, match="same length"):
        effect_intervals([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="level"):
        mean_diff_interval([1.0, 2.0], [0.0, 0.0], level=1.0)
