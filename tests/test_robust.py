"""Robust interval-weighted RF: intervals, pessimistic costs, the weights problem, the estimator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from scipy.optimize import linprog
from sklearn.utils.estimator_checks import check_estimator

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, RobustRF
from afr_cli.models.robust import (
    bootstrap_nodes,
    closed_form_weights,
    half_widths,
    pessimistic_costs,
    train_nodes,
    weight_bounds,
    weights_problem,
    worst_end,
)
from afr_cli.solvers.solve import solve


def _costs(rng, T=12):
    return rng.uniform(0.3, 0.8, T)


def _solve_weights(c, eps, lam):
    return solve(weights_problem(c, eps, lam)).theta


def test_cost_identity_equals_the_literal_worst_end_rule():
    rng = np.random.default_rng(0)
    n, T = 40, 7
    y = rng.normal(size=n)
    z = rng.normal(size=(n, T))
    h = rng.uniform(0, 1.5, size=(n, T))
    h[:, 0] = 0.0  # degenerate intervals too
    literal = np.abs(y[:, None] - worst_end(y, z - h, z + h)).sum(axis=0)
    np.testing.assert_allclose(pessimistic_costs(y, z, h), literal, rtol=1e-12)
    # the printed rule without the /2 picks the wrong end for some rows: it is a typo
    typo = np.where(y[:, None] < (z - h) + (z + h), z + h, z - h)
    assert not np.allclose(np.abs(y[:, None] - typo).sum(axis=0), literal)


def test_half_widths_are_t_intervals_and_zero_for_single_row_leaves():
    sd = np.array([1.0, 2.0, 3.0, 0.5])
    n = np.array([1, 2, 10, 0])
    h = half_widths(sd, n, 0.05)
    lo, hi = sps.t.interval(0.95, df=1, loc=0, scale=2.0 / np.sqrt(2))
    assert h[1] == pytest.approx(hi)
    assert h[2] == pytest.approx(sps.t.ppf(0.975, 9) * 3.0 / np.sqrt(10))
    assert h[0] == 0.0 and h[3] == 0.0


@pytest.mark.parametrize("eps,lam", [(0.5, 0.01), (0.9, 0.1), (0.3, 1.0), (1.0, 0.05)])
def test_qp_weights_match_the_closed_form(eps, lam):
    c = _costs(np.random.default_rng(int(lam * 100)))
    w, ref = _solve_weights(c, eps, lam), closed_form_weights(c, eps, lam)
    objective = lambda v: c @ v + lam * v @ v  # noqa: E731
    assert objective(w) == pytest.approx(objective(ref), rel=1e-9)
    assert objective(ref) <= objective(w) + 1e-12  # the oracle is the optimum
    np.testing.assert_allclose(w, ref, atol=1e-7)


@pytest.mark.parametrize("eps", [0.2, 0.7, 1.0])
def test_lp_optimum_matches_linprog(eps):
    c = _costs(np.random.default_rng(3))
    T = len(c)
    lo, hi = weight_bounds(T, eps)
    ref = linprog(c, A_eq=np.ones((1, T)), b_eq=[1.0], bounds=[(lo, hi)] * T, method="highs")
    w = _solve_weights(c, eps, 0.0)
    assert c @ w == pytest.approx(ref.fun, abs=1e-8)
    np.testing.assert_allclose(w, ref.x, atol=1e-6)  # unique: the cheapest tree takes all of eps
    assert w.argmax() == c.argmin()


@pytest.mark.parametrize("eps,lam", [(0.1, 0.0), (0.5, 0.0), (1.0, 0.0), (0.5, 0.3), (1.0, 10.0)])
def test_weights_are_feasible(eps, lam):
    c = _costs(np.random.default_rng(7), T=30)
    w = _solve_weights(c, eps, lam)
    lo, hi = weight_bounds(30, eps)
    assert w.sum() == pytest.approx(1.0, abs=1e-8)
    assert w.min() >= lo - 1e-9 and w.max() <= hi + 1e-9


def test_eps_zero_is_scikit_learns_forest(small_data):
    Xtr, ytr, Xte, _ = small_data
    model = RobustRF(eps=0.0, lam=0.3, n_estimators=15, random_state=4).fit(Xtr, ytr)
    np.testing.assert_allclose(model.w_, np.full(15, 1 / 15))
    np.testing.assert_allclose(model.predict(Xte), model.forest_.predict(Xte), rtol=1e-12, atol=1e-12)


def test_bootstrap_leaf_statistics_are_each_trees_own_sample(small_data):
    Xtr, ytr, _, _ = small_data
    forest = get_ensemble("rf").fit(Xtr, ytr, 2, n_estimators=4, min_samples_leaf=3)
    stats = LeafStatistics(forest, Xtr, ytr)
    table = bootstrap_nodes(stats)
    n = len(ytr)
    for t, est in enumerate(forest.trees):
        # the tree's bootstrap draws, as scikit-learn makes them from the tree's seed
        sample = np.random.RandomState(est.random_state).randint(0, n, n)
        leaves = est.apply(Xtr[sample])
        for leaf in np.unique(leaves)[:10]:
            yl = ytr[sample][leaves == leaf]
            g = stats.offsets[t] + leaf
            assert table.count[g] == len(yl)
            assert table.mean[g] == pytest.approx(yl.mean())
            assert table.sd[g] == pytest.approx(yl.std(ddof=1) if len(yl) > 1 else 0.0, abs=1e-9)


def test_train_leaf_statistics_use_all_training_rows(small_data):
    Xtr, ytr, _, _ = small_data
    forest = get_ensemble("rf").fit(Xtr, ytr, 0, n_estimators=3, min_samples_leaf=2)
    stats = LeafStatistics(forest, Xtr, ytr)
    table = train_nodes(stats)
    for g in np.unique(stats.train_leaves)[:20]:
        yl = ytr[stats.members(g)]
        assert table.count[g] == len(yl)
        assert table.mean[g] == pytest.approx(yl.mean())
        assert table.sd[g] == pytest.approx(yl.std(ddof=1) if len(yl) > 1 else 0.0, abs=1e-9)


def test_single_row_leaves_have_no_interval(small_data):
    Xtr, ytr, _, _ = small_data
    model = RobustRF(base="ert", leaf_stats="train", eps=1.0, n_estimators=5, random_state=0).fit(Xtr, ytr)
    rows = model.leaf_stats_.rows()
    feats = FAMILIES["robust-rf-train"].features(rows, {"alpha": 0.05})
    single = model.leaf_stats_.counts[rows.leaves] == 1  # ERT, min_samples_leaf = 1: pure leaves
    assert single.any()
    assert np.all(feats.h[single] == 0.0)
    np.testing.assert_allclose(feats.z[single], np.broadcast_to(ytr[:, None], feats.z.shape)[single])
    # the cost of such a tree is its plain absolute error on the training rows
    np.testing.assert_allclose(
        model.costs_ * len(ytr) * ytr.std(), pessimistic_costs(ytr, feats.z, feats.h), rtol=1e-12
    )


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_alpha_outside_the_open_unit_interval_is_an_input_error(small_data, alpha):
    Xtr, ytr, _, _ = small_data
    with pytest.raises(AfrInputError, match=r"alpha must be in \(0, 1\)"):
        RobustRF(alpha=alpha, n_estimators=3).fit(Xtr, ytr)


def test_unknown_leaf_stats_is_an_input_error(small_data):
    Xtr, ytr, _, _ = small_data
    with pytest.raises(AfrInputError, match="leaf_stats"):
        RobustRF(leaf_stats="oob", n_estimators=3).fit(Xtr, ytr)


def test_boosted_bases_are_an_input_error(small_data):
    Xtr, ytr, _, _ = small_data
    with pytest.raises(AfrInputError, match="RobustRF.base"):
        RobustRF(base="gbm-dt", n_estimators=3).fit(Xtr, ytr)


@pytest.mark.parametrize("base", ["ert", "dt"])
def test_eps_zero_is_the_base_ensembles_prediction(small_data, base):
    Xtr, ytr, Xte, _ = small_data
    model = RobustRF(base=base, eps=0.0, n_estimators=6, random_state=2).fit(Xtr, ytr)
    np.testing.assert_allclose(model.predict(Xte), model.forest_.predict(Xte), rtol=1e-12, atol=1e-12)


def test_lower_cost_trees_get_more_weight(small_data):
    Xtr, ytr, _, _ = small_data
    model = RobustRF(eps=0.8, lam=0.5, n_estimators=20, random_state=1).fit(Xtr, ytr)
    order = np.argsort(model.costs_)
    assert np.all(np.diff(model.w_[order]) <= 1e-7)
    np.testing.assert_allclose(model.w_, closed_form_weights(model.costs_, 0.8, 0.5), atol=1e-7)


@pytest.mark.parametrize("base", ["rf", "ert", "dt"])
def test_passes_check_estimator(base):
    check_estimator(RobustRF(base=base, n_estimators=5, eps=0.5, lam=0.1))
