"""Holm's adjustment, effect sizes, the Bayesian signed-rank test with a ROPE and the Bayesian
correlated t-test (afr_cli/analysis/stats.py, afr_cli/analysis/bayesian.py), and how `afr table --compare` leads
with them."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from afr_cli.analysis.bayesian import DEFAULT_ROPE, correlated_ttest, signed_rank_test
from afr_cli.analysis.stats import effect_sizes, holm_adjust
from tests.conftest import assert_one_line_error, run_afr


def test_holm_by_hand_in_the_given_order():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005, 3·0.01, 2·0.03, max(1·0.04, 0.06)
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm_adjust([0.2]) == [0.2]  # a family of one is the raw p
    adjusted = holm_adjust([0.01, math.nan, 0.02])  # NaN stays NaN and is not counted
    assert math.isnan(adjusted[1]) and adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.02)


def test_effect_sizes_by_hand():
    sizes = effect_sizes([1.0, 2.0, 3.0, 5.0], [0.0, 0.0, 0.0, 0.0])
    d = np.array([1.0, 2.0, 3.0, 5.0])
    assert sizes.cohen_dz == pytest.approx(d.mean() / d.std(ddof=1))
    assert sizes.rank_biserial == 1.0  # every difference positive
    mixed = effect_sizes([1.0, 2.0, -3.0, 0.0], [0.0] * 4)  # zero dropped; ranks 1, 2 (+) and 3 (−)
    assert mixed.rank_biserial == 0.0
    assert math.isnan(effect_sizes([0.1, 0.2], [0.1, 0.2]).rank_biserial)  # no non-zero difference


def _signed_rank_by_loop(diff, rope, samples, seed, prior=0.5):
    """The signed-rank posterior sampled pair by pair as the authors' tutorial code does."""
    z = np.concatenate(([0.0], np.asarray(diff, dtype=float)))
    weights = np.concatenate(([prior], np.ones(len(diff))))
    rng = np.random.default_rng(seed)
    wins = np.zeros(3)
    for _ in range(samples):
        w = rng.dirichlet(weights)
        mass = np.zeros(3)
        for i in range(z.size):
            for j in range(z.size):
                s = z[i] + z[j]
                mass[0 if s < -2 * rope else (2 if s > 2 * rope else 1)] += w[i] * w[j]
        top = mass == mass.max()
        wins += top / top.sum()
    return wins / samples


def test_signed_rank_agrees_with_a_direct_loop_to_monte_carlo_error():
    diff = [0.012, -0.004, 0.02, 0.008, 0.015, -0.011, 0.006, 0.03, 0.001]
    fast = signed_rank_test(diff, rope=0.01)
    slow = _signed_rank_by_loop(diff, 0.01, 2000, seed=7)  # other draws: agreement within MC error
    probs = fast.probabilities
    assert probs.left + probs.rope + probs.right == pytest.approx(1.0)
    for mine, theirs in zip((probs.left, probs.rope, probs.right), slow):
        assert abs(mine - theirs) < 4 * math.sqrt(0.25 / 2000) + 4 * math.sqrt(0.25 / fast.samples)
    # the same draws give the same numbers exactly
    same = signed_rank_test(diff, rope=0.01, samples=300, seed=7)
    loop = _signed_rank_by_loop(diff, 0.01, 300, seed=7)
    assert [same.probabilities.left, same.probabilities.rope, same.probabilities.right] == pytest.approx(loop)


def _signed_rank_as_first_written(diff, rope, samples, seed, prior=0.5):
    """The test as afr first computed it (fresh draws per call, BLAS on as many threads
    as it likes, the shares as a mean of splits): the reference the faster code must equal."""
    z = np.concatenate(([0.0], np.asarray(diff, dtype=float)))
    draws = np.random.default_rng(seed).dirichlet(np.concatenate(([prior], np.ones(z.size - 1))), samples)
    pair_sum = z[:, None] + z[None, :]
    masses = np.stack(
        [
            ((draws @ r.astype(float)) * draws).sum(axis=1)
            for r in (pair_sum < -2 * rope, np.abs(pair_sum) <= 2 * rope, pair_sum > 2 * rope)
        ],
        axis=1,
    )
    top = masses == masses.max(axis=1, keepdims=True)
    return [float(v) for v in (top / top.sum(axis=1, keepdims=True)).mean(axis=0)]


def test_signed_rank_gives_the_first_versions_floats_exactly():
    # the faster code (draws shared between calls, BLAS on one thread, counts for shares):
    # not one bit of a probability may change, at the printed sizes and far beyond them
    rng = np.random.default_rng(35)
    for n in (1, 2, 5, 11, 11, 16, 33, 60, 199):
        diff = rng.normal(rng.choice([-0.01, 0.0, 0.01]), rng.choice([0.002, 0.01, 0.03]), n)
        for rope in (0.0, 0.005, 0.01, 0.05):
            samples = 50_000 if n <= 16 else 3_000
            ours = signed_rank_test(diff, rope, samples=samples, seed=n % 3).probabilities
            assert [ours.left, ours.rope, ours.right] == _signed_rank_as_first_written(diff, rope, samples, n % 3)


def test_signed_rank_splits_tied_regions_as_before():
    from afr_cli.analysis.bayesian import _top_shares

    masses = np.array([[0.2, 0.4, 0.4], [0.5, 0.25, 0.25], [1 / 3, 1 / 3, 1 / 3], [0.1, 0.2, 0.7]])
    top = masses == masses.max(axis=1, keepdims=True)
    assert list(_top_shares(masses)) == [float(v) for v in (top / top.sum(axis=1, keepdims=True)).mean(axis=0)]
    assert _top_shares(masses[[1, 3]]) == (0.5, 0.0, 0.5)


def test_signed_rank_is_seeded_and_reads_clear_cases():
    diff = np.linspace(-0.02, 0.03, 11)
    assert signed_rank_test(diff) == signed_rank_test(diff)  # identical, run after run
    assert signed_rank_test(diff, seed=1) != signed_rank_test(diff, seed=2)
    assert signed_rank_test([0.05] * 12).probabilities.right > 0.99  # all far above the ROPE: B better
    assert signed_rank_test([-0.002, 0.001, 0.003] * 4).probabilities.rope > 0.99  # all inside it
    assert signed_rank_test([-0.05] * 12).probabilities.left > 0.99


def test_correlated_ttest_is_the_nadeau_bengio_corrected_student_t():
    rng = np.random.default_rng(3)
    d = rng.normal(0.004, 0.01, size=100)
    plain = correlated_ttest(d, rho=0.0, rope=DEFAULT_ROPE)
    ci = sps.ttest_1samp(d, 0.0).confidence_interval(0.95)  # rho = 0: the ordinary t interval
    assert (plain.ci_low, plain.ci_high) == pytest.approx((ci.low, ci.high))
    corrected = correlated_ttest(d, rho=0.2, rope=0.005)
    scale = math.sqrt((1 / 100 + 0.2 / 0.8) * d.var(ddof=1))
    assert corrected.scale == pytest.approx(scale)
    assert corrected.probabilities.right == pytest.approx(sps.t.sf((0.005 - d.mean()) / scale, 99))
    assert corrected.probabilities.left == pytest.approx(sps.t.cdf((-0.005 - d.mean()) / scale, 99))
    assert corrected.ci_high - corrected.ci_low > plain.ci_high - plain.ci_low  # overlap widens it
    flat = correlated_ttest([0.0] * 5, rho=0.2)
    assert (flat.probabilities.rope, flat.ci_low, flat.ci_high) == (1.0, 0.0, 0.0)
    assert math.isnan(correlated_ttest([0.1], rho=0.2).probabilities.rope)


def _frame(models: dict[str, float], datasets, reps=6, base="RF", train_fraction=0.8):
    rng = np.random.default_rng(0)
    rows = []
    for dataset in datasets:
        for rep in range(reps):
            noise = rng.normal(0, 0.01)
            for model, shift in models.items():
                r2 = 0.5 + shift + noise + 0.002 * rep
                rows.append(
                    {
                        "dataset": dataset,
                        "base": base,
                        "model": model,
                        "rep": rep,
                        "r2": r2,
                        "mae": 1 - r2,
                        "rmse": 1 - r2,
                        "params": {},
                        "selection": "inner-cv",
                        "train_fraction": train_fraction,
                        "noise_eta": 0.0,
                    }
                )
    return pd.DataFrame(rows)


def test_compare_models_carries_holm_effects_and_bayesian_tests():
    from afr_cli.tables import compare_models, render_comparison_lead, render_model_comparison

    frame = pd.concat(
        [_frame({"a": 0.0, "b": 0.03}, ["Wine", "Diabetes"], base=base) for base in ("RF", "ERT")], ignore_index=True
    )
    comparison = compare_models(frame, "a", "b", rope=0.01)
    raw = [c.ttest.p for c in comparison.bases]
    assert comparison.holm_p() == pytest.approx(holm_adjust(raw), nan_ok=True)  # the same 0.03 everywhere: no p
    block = comparison.bases[0]
    assert block.per_dataset_bayes["Wine"].rho == 0.2  # n_test / n from the stored split
    assert block.per_dataset_bayes["Wine"].probabilities.right > 0.9  # b better by 0.03 on every split
    assert block.signed_rank.probabilities.right > 0.5
    lead = render_comparison_lead(comparison)
    assert "p (Holm)" in lead and "fewer than 5 datasets" in lead and "correlated t-test" in lead
    md = render_model_comparison(comparison, "md")
    assert "Holm-adjusted over 2 bases" in md and "corrected 95 % interval" in md and "rank-biserial" in md
    errors = compare_models(frame, "a", "b", metric="mae")  # lower error is better: still b better
    assert errors.bases[0].per_dataset_bayes["Wine"].probabilities.right > 0.9
    with pytest.raises(Exception, match="--rope"):
        compare_models(frame, "a", "b", rope=-0.1)


def test_compare_json_holds_every_number_and_is_identical_across_runs(tmp_path):
    from tests.test_tables import _write_store

    frame = _frame({"a": 0.0, "b": 0.004}, ["Wine", "Diabetes", "Boston", "Concrete", "Yacht", "Airfoil"])
    _write_store(tmp_path / "s", frame)
    args = ("table", "--results", str(tmp_path / "s"), "--compare", "a", "b", "--format", "json", "--rope", "0.002")
    first, second = run_afr(*args), run_afr(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout  # the Bayesian results are seeded
    data = json.loads(first.stdout)
    assert (data["a"], data["b"], data["rope"]) == ("a", "b", 0.002)
    base = data["bases"][0]
    assert len(base["datasets"]) == 6 and base["low_power"] is False
    assert set(base["ttest"]) >= {"n", "mean_diff", "t", "p", "p_holm", "ci_low", "ci_high"}
    assert set(base["effect_sizes"]) == {"cohen_dz", "rank_biserial"}
    assert set(base["signed_rank"]) >= {"p_a_better", "p_equivalent", "p_b_better", "seed", "rope"}
    assert base["signed_rank"]["rope"] == 0.002
    per = base["datasets"][0]["correlated_ttest"]
    assert per["rho"] == 0.2 and per["p_a_better"] + per["p_equivalent"] + per["p_b_better"] == pytest.approx(1.0)
    assert base["wilcoxon"]["p"] is not None and base["ttest"]["p_holm"] == base["ttest"]["p"]  # one base
    bad = run_afr("table", "--results", str(tmp_path / "s"), "--compare", "a", "b", "--rope", "-1")
    assert_one_line_error(bad, "--rope")
    no_compare = run_afr("table", "--results", str(tmp_path / "s"), "--format", "json")
    assert_one_line_error(no_compare, "--format")


def test_compare_eps_abrf_sat_rf_leads_with_the_comparison():
    proc = run_afr("table", "--compare", "eps-abrf", "sat-rf")
    assert proc.returncode == 0, proc.stderr
    first = "\n".join(proc.stdout.splitlines()[:20])
    assert "sat-rf against eps-abrf" in first
    assert "p (Holm)" in first  # two bases: RF and ERT
    assert "P(eps-abrf) / P(=) / P(sat-rf)" in first  # the ROPE probabilities
    assert "corrected 95 % interval" in first and "| Diabetes" in first  # per-dataset intervals
    assert "rf (RF)" not in proc.stdout  # the full 46-column table only with --all
    assert "add --all" not in proc.stdout  # the hint goes to the terminal (stderr), never into a saved table
    assert proc.stderr.rstrip().endswith("(the full model table: add --all)")


def test_cells_sharing_a_split_are_pooled_in_the_tests():
    """η = 0 and η = 0.5 cells share split and forest: the tests run over training fractions."""
    from afr_cli.tables import compare_models, render_model_comparison

    frames = []
    for fraction in (0.15, 0.5, 0.85):
        for eta in (0.0, 0.5):
            frame = _frame({"a": 0.0, "b": 0.02 + fraction / 10}, ["Boston"], train_fraction=fraction)
            frames.append(frame.assign(noise_eta=eta))
    comparison = compare_models(pd.concat(frames, ignore_index=True), "a", "b")
    block = comparison.bases[0]
    assert len(block.per_dataset) == 6 and block.ttest.n == 3  # six cells, three independent units
    assert block.per_dataset_bayes["Boston [train_fraction=15, noise_eta=0]"].rho == 0.85
    md = render_model_comparison(comparison, "md")
    assert "over n = 3 units" in md and "pool the 6 cells into 3 units" in md
