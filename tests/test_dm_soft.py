"""dm-soft: the forest at eps = 0 and tau -> 0, the soft trees against a per-tree loop, training
through the shared solver, and its config."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_afr

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES
from afr_cli.solvers.solve import solve


@pytest.fixture(params=["rf", "ert"])
def fold(request, small_data):
    Xtr, ytr, Xte, yte = small_data
    forest = get_ensemble(request.param).fit(Xtr, ytr, 0, n_estimators=8, min_samples_leaf=5)
    stats = LeafStatistics(forest, Xtr, ytr)
    return forest, stats.rows(), stats.rows(Xte), ytr


def test_eps_zero_and_tau_to_zero_is_the_forest(fold):
    forest, train, query, _ = fold
    family = FAMILIES["dm-soft"]
    feats = family.features(query, {"tau": 1e-12})
    assert family.training_problem(family.features(train, {"tau": 1e-12}), fold[3], {"eps": 0.0}) is None
    np.testing.assert_allclose(family.predict(feats, {"eps": 0.0}, None), forest.predict(query.X), atol=1e-10)
    # with a larger tau the trees are smoothed: no longer the forest
    smooth = family.predict(family.features(query, {"tau": 1.0}), {"eps": 0.0}, None)
    assert np.abs(smooth - forest.predict(query.X)).max() > 1e-3


def _soft_tree(tree, x: np.ndarray, tau: float) -> float:
    """A tree's soft prediction by walking every root-to-leaf path (eqs 12-13 literally)."""
    t = tree.tree_
    total, stack = 0.0, [(0, 1.0)]
    while stack:
        node, mass = stack.pop()
        if t.children_left[node] == -1:
            total += mass * t.value[node, 0, 0]
            continue
        u = (np.float64(np.float32(x[t.feature[node]])) - t.threshold[node]) / tau
        right = 1.0 / (1.0 + np.exp(-u))
        stack += [(t.children_left[node], mass * (1.0 - right)), (t.children_right[node], mass * right)]
    return total


def test_features_are_each_trees_soft_prediction(fold):
    forest, _, query, _ = fold
    feats = FAMILIES["dm-soft"].features(query, {"tau": 0.3})
    loop = np.array([[_soft_tree(tr, x, 0.3) for tr in forest.trees] for x in query.X])
    np.testing.assert_allclose(feats.trees, loop, rtol=1e-10, atol=1e-12)
    assert FAMILIES["dm-soft"].features(query, {"tau": 0.3}) is feats  # cached per (row set, tau)


def test_trained_weights_enter_as_alpha(fold):
    _, train, query, ytr = fold
    family = FAMILIES["dm-soft"]
    mixing = {"eps": 0.6}
    problem = family.training_problem(family.features(train, {"tau": 0.1}), ytr, mixing)
    w = solve(problem).theta
    assert w.min() >= -1e-8 and abs(w.sum() - 1.0) < 1e-6
    feats = family.features(query, {"tau": 0.1})
    T = feats.trees.shape[1]
    alpha = 0.4 / T + 0.6 * w
    np.testing.assert_allclose(family.predict(feats, mixing, w), feats.trees @ alpha, rtol=1e-12)
    uniform = family.predict(family.features(train, {"tau": 0.1}), mixing, np.full(T, 1.0 / T))
    trained = family.predict(family.features(train, {"tau": 0.1}), mixing, w)
    assert ((ytr - trained) ** 2).sum() <= ((ytr - uniform) ** 2).sum() + 1e-9  # training never worsens the fit


@pytest.mark.slow
def test_dm_soft_config_validates():
    proc = run_afr("validate", "configs/dm_soft.yaml", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "11 datasets, 2 bases, 3 models" in proc.stdout


def test_boosted_ensemble_with_intercept_is_recovered_at_eps_zero():
    """Over the registry's GBM (intercept, weights = learning rate), c_k = T w_k tree_k, so uniform
    attention at tau -> 0 gives the ensemble's own prediction back."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(200, noise=1.0, random_state=1)
    gbm = get_ensemble("gbm-dt").fit(X[:150], y[:150], 0, n_estimators=12, learning_rate=0.3, max_depth=3)
    assert gbm.intercept != 0.0
    rows = LeafStatistics(gbm, X[:150], y[:150]).rows(X[150:])
    family = FAMILIES["dm-soft"]
    pred = family.predict(family.features(rows, {"tau": 1e-12}), {"eps": 0.0}, None)
    np.testing.assert_allclose(pred, gbm.predict(X[150:]), atol=1e-10)
