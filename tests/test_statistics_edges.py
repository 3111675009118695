"""The statistics at their edges give NaN or a one-line reason, never inf or a significant p."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from afr_cli.analysis.bayesian import signed_rank_test
from afr_cli.analysis.effect_intervals import dz_interval
from afr_cli.analysis.hierarchical import hierarchical_test
from afr_cli.analysis.stats import effect_sizes, friedman_from_ranks, friedman_nemenyi, paired_ttest


def test_effect_sizes_with_a_nan_are_nan():
    e = effect_sizes([0.5, math.nan, 0.7], [0.4, 0.5, 0.6])
    assert math.isnan(e.cohen_dz) and math.isnan(e.rank_biserial)
    assert math.isnan(paired_ttest([0.5, math.nan, 0.7], [0.4, 0.5, 0.6]).p)


def test_signed_rank_does_not_ignore_a_nan():
    r = signed_rank_test([0.02, 0.03, math.nan, 0.04])
    assert r.n == 4 and all(math.isnan(p) for p in (r.probabilities.left, r.probabilities.rope, r.probabilities.right))


def test_differences_constant_up_to_rounding_have_no_dz_and_no_p():
    a, b = [0.5, 0.6, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7]  # differences 0.1 up to the last bit
    assert np.ptp(np.subtract(a, b)) > 0  # not exactly constant: the rounding case
    assert math.isnan(effect_sizes(a, b).cohen_dz)
    assert math.isnan(dz_interval(a, b).estimate)
    t = paired_ttest(a, b)
    assert math.isnan(t.t) and math.isnan(t.p)


def test_friedman_on_one_dataset_is_undefined():
    assert all(math.isnan(v) for v in friedman_from_ranks([1.0, 2.0, 3.0], 1))
    table = pd.DataFrame({"a": [0.5], "b": [0.6], "c": [0.7]}, index=["Wine"])
    result = friedman_nemenyi(table)
    assert math.isnan(result.iman_davenport_f) and math.isnan(result.iman_davenport_p) and math.isnan(result.p)


def test_hierarchical_test_on_huge_differences_says_why():
    rows = [np.array([1e155, 2e155, 3e155]), np.array([1e155, 3e155, 2.5e155])]
    with pytest.raises(ValueError, match="too large for their variance to be a finite double"):
        hierarchical_test(rows, 0.2, samples=100, burn_in=10)
