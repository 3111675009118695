"""The hierarchical Bayesian test over datasets × repetitions (afr_cli/analysis/hierarchical.py),
checked against an independent implementation: NumPyro's NUTS on the model of baycomp's
``hierarchical-t-test.stan``, recorded in tests/fixtures/hierarchical_reference.json by
tests/fixtures/make_hierarchical_reference.py (which says how to rerun it)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from afr_cli.analysis.hierarchical import batch_se, hierarchical_draws, hierarchical_test, region_masses, summarise

FIXTURE = Path(__file__).parent / "fixtures" / "hierarchical_reference.json"
CASES = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]
SAMPLES, BURN_IN = 4000, 500
# Agreement is judged by the two Monte Carlo standard errors (afr's by batch means, the reference's
# from NumPyro's effective sample size): within Z of their combined error, plus FLOOR, because near
# 0 or 1 a handful of draws decide a share and the estimated errors are themselves uncertain.
Z, FLOOR = 4.0, 0.003


def _combined(a: float, b: float) -> float:
    return Z * math.hypot(a, b) + FLOOR


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_posterior_agrees_with_numpyro_within_monte_carlo_error(case):
    ref = case["reference"]
    assert ref["divergences"] <= 0.001 * ref["draws"]  # the reference chain itself is trustworthy
    draws = hierarchical_draws(case["diffs"], case["rho"], case["rope"], SAMPLES, BURN_IN, seed=11)
    result = summarise(draws, case["rope"], 0.95, BURN_IN, 11)
    masses = region_masses(draws)
    predictive_se = batch_se(masses)
    ours = (result.probabilities.left, result.probabilities.rope, result.probabilities.right)
    ours_se = (result.mc_se.left, result.mc_se.rope, result.mc_se.right)
    ours_pred = (result.predictive.left, result.predictive.rope, result.predictive.right)
    for k in range(3):
        assert abs(ours[k] - ref["probabilities"][k]) <= _combined(ours_se[k], ref["probabilities_se"][k]), (
            k,
            ours,
            ref,
        )
        assert abs(ours_pred[k] - ref["predictive"][k]) <= _combined(predictive_se[k], ref["predictive_se"][k]), (
            k,
            ours_pred,
            ref,
        )
    assert abs(result.mean - ref["mean"]) <= Z * math.hypot(result.mean_mc_se, ref["mean_se"]) + 0.02 * ref["mean_sd"]


def test_the_check_can_fail_a_model_without_the_correlation():
    # the same comparison with ρ = 0 (repetitions taken as independent) is far outside the tolerance
    case = next(c for c in CASES if c["name"] == "left-with-outlier")
    ref = case["reference"]
    draws = hierarchical_draws(case["diffs"], 0.0, case["rope"], SAMPLES, BURN_IN, seed=11)
    masses = region_masses(draws)
    left, left_se = float(masses[:, 0].mean()), float(batch_se(masses)[0])
    assert abs(left - ref["predictive"][0]) > 3 * _combined(left_se, ref["predictive_se"][0])


def test_same_seed_same_numbers_and_another_seed_other_draws():
    case = CASES[0]
    first = hierarchical_test(case["diffs"], case["rho"], case["rope"], samples=300, burn_in=50, seed=5)
    assert first == hierarchical_test(case["diffs"], case["rho"], case["rope"], samples=300, burn_in=50, seed=5)
    other = hierarchical_test(case["diffs"], case["rho"], case["rope"], samples=300, burn_in=50, seed=6)
    assert other.mean != first.mean
    probs = first.probabilities
    assert probs.left + probs.rope + probs.right == pytest.approx(1.0)
    assert first.ci_low < first.mean < first.ci_high


def test_a_noisy_dataset_is_shrunk_toward_the_others():
    rng = np.random.default_rng(3)
    diffs = [0.02 + rng.normal(0.0, 0.005, 10) for _ in range(8)]
    noisy = 0.02 + rng.normal(0.0, 0.005, 10) * 8.0 + 0.03  # far from the rest and eight times as noisy
    result = hierarchical_test(diffs + [noisy], 0.2, 0.01, samples=2000, burn_in=300)
    raw = float(noisy.mean())
    assert result.mean < result.dataset_means[-1] < raw  # pulled toward the population mean
    assert raw - result.dataset_means[-1] > 0.3 * (raw - result.mean)  # and by a good part of the way
    assert result.repetitions == (10,) * 9 and result.n_datasets == 9


def test_the_correlation_widens_the_posterior():
    case = CASES[0]
    independent = hierarchical_test(case["diffs"], 0.0, case["rope"], samples=2000, burn_in=300)
    correlated = hierarchical_test(case["diffs"], 0.5, case["rope"], samples=2000, burn_in=300)
    assert correlated.ci_high - correlated.ci_low > independent.ci_high - independent.ci_low


def test_the_unit_does_not_change_the_answer():
    case = CASES[1]
    once = hierarchical_test(case["diffs"], case["rho"], case["rope"], samples=500, burn_in=100)
    scaled = hierarchical_test(
        [np.asarray(d) * 100.0 for d in case["diffs"]], case["rho"], case["rope"] * 100.0, samples=500, burn_in=100
    )
    assert (scaled.probabilities.left, scaled.probabilities.rope, scaled.probabilities.right) == pytest.approx(
        (once.probabilities.left, once.probabilities.rope, once.probabilities.right), abs=1e-9
    )
    assert scaled.mean == pytest.approx(100.0 * once.mean, rel=1e-9)


def test_a_constant_dataset_keeps_its_mean_and_ragged_rows_with_their_own_rho_are_accepted():
    rng = np.random.default_rng(4)
    diffs = [rng.normal(0.01, 0.01, 10), rng.normal(0.0, 0.01, 6), np.full(8, 0.02)]
    result = hierarchical_test(diffs, [0.2, 0.1, 0.3], 0.01, samples=500, burn_in=100)
    assert result.repetitions == (10, 6, 8)
    assert 0.0 < result.dataset_means[2] < 0.04


@pytest.mark.parametrize(
    "diffs, rho, rope, match",
    [
        ([], 0.2, 0.01, "no dataset"),
        ([[0.1, 0.2], [0.3]], 0.2, 0.01, "at least 2"),
        ([[0.1, math.nan]], 0.2, 0.01, "non-finite"),
        ([[0.1, 0.2]], 1.0, 0.01, "rho"),
        ([[0.1, 0.2]], 0.2, -0.01, "rope"),
        ([[0.1, 0.1], [0.2, 0.2]], 0.2, 0.01, "vary"),
    ],
)
def test_bad_input_is_a_value_error(diffs, rho, rope, match):
    with pytest.raises(ValueError, match=match):
        hierarchical_test(diffs, rho, rope, samples=100, burn_in=10)
