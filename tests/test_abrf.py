"""eps-ABRF and the forest leaf statistics against brute-force loops."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_simplex

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import EpsABRF


def _brute_keys_values(forest, Xtr, ytr, X):
    """A_k(x), B_k(x) by explicit loops over rows and trees."""
    n, T = len(X), forest.n_trees
    A, B = np.zeros((n, T, X.shape[1])), np.zeros((n, T))
    train_leaf = forest.apply(Xtr)
    query_leaf = forest.apply(X)
    for s in range(n):
        for k in range(T):
            members = [j for j in range(len(Xtr)) if train_leaf[j, k] == query_leaf[s, k]]
            A[s, k] = Xtr[members].mean(axis=0)
            B[s, k] = ytr[members].mean()
    return A, B


def _brute_predict(forest, Xtr, ytr, X, eps, tau, w):
    A, B = _brute_keys_values(forest, Xtr, ytr, X)
    out = np.zeros(len(X))
    for s in range(len(X)):
        d = np.array([np.sum((X[s] - A[s, k]) ** 2) for k in range(len(w))])
        soft = np.exp(-d / tau) / np.exp(-d / tau).sum()
        out[s] = sum(((1 - eps) * soft[k] + eps * w[k]) * B[s, k] for k in range(len(w)))
    return out


def test_leaf_statistics_match_loops(small_data):
    Xtr, ytr, Xte, _ = small_data
    forest = get_ensemble("ert").fit(Xtr, ytr, 0, n_estimators=6, min_samples_leaf=5)
    rows = LeafStatistics(forest, Xtr, ytr).rows(Xte)
    A, B = _brute_keys_values(forest, Xtr, ytr, Xte)
    assert rows.keys.shape == (len(Xte), 6, Xtr.shape[1])
    np.testing.assert_allclose(rows.keys, A, atol=1e-12)
    np.testing.assert_allclose(rows.values, B, atol=1e-12)
    stats = LeafStatistics(forest, Xtr, ytr)
    leaf = stats.train_leaves[0, 2]
    assert set(stats.members(leaf)) == {j for j in range(len(Xtr)) if stats.train_leaves[j, 2] == leaf}


@pytest.mark.parametrize("base", ["rf", "ert"])
def test_predictions_equal_brute_force(small_data, base):
    Xtr, ytr, Xte, _ = small_data
    model = EpsABRF(base=base, n_estimators=5, min_samples_leaf=5, eps=0.4, tau=2.0, random_state=1).fit(Xtr, ytr)
    expected = _brute_predict(model.forest_, Xtr, ytr, Xte, 0.4, 2.0, model.w_)
    np.testing.assert_allclose(model.predict(Xte), expected, rtol=1e-10)


def test_trained_weights_are_optimal_on_the_simplex(small_data):
    Xtr, ytr, _, _ = small_data
    model = EpsABRF(n_estimators=8, min_samples_leaf=5, eps=0.7, tau=1.0, random_state=2).fit(Xtr, ytr)
    assert model.w_.min() >= -1e-9 and model.w_.sum() == pytest.approx(1, abs=1e-6)
    rows = model.leaf_stats_.rows()
    feats = model.family.features(rows, {"tau": 1.0})
    problem = model.family.training_problem(feats, ytr, {"eps": 0.7})
    best = problem.objective(model.w_, "l2")
    rng = np.random.default_rng(0)
    assert all(best <= problem.objective(w, "l2") + 1e-9 for w in random_simplex(rng, 8, 100))


def test_l1_loss_trains_by_lp(small_data):
    Xtr, ytr, Xte, _ = small_data
    model = EpsABRF(n_estimators=6, min_samples_leaf=5, eps=0.6, loss="l1", random_state=0).fit(Xtr, ytr)
    assert model.solve_result_.status == "optimal"
    feats = model.family.features(model.leaf_stats_.rows(), {"tau": 1.0})
    problem = model.family.training_problem(feats, ytr, {"eps": 0.6})
    rng = np.random.default_rng(5)
    best = problem.objective(model.w_, "l1")
    assert all(best <= problem.objective(w, "l1") + 1e-7 for w in random_simplex(rng, 6, 100))
    assert np.isfinite(model.predict(Xte)).all()


def test_eps_one_is_a_statically_weighted_forest(small_data):
    Xtr, ytr, Xte, _ = small_data
    model = EpsABRF(n_estimators=6, min_samples_leaf=5, eps=1.0, random_state=0).fit(Xtr, ytr)
    B = model.leaf_stats_.rows(Xte).values
    np.testing.assert_allclose(model.predict(Xte), B @ model.w_, rtol=1e-12)


def test_eps_zero_is_the_softmax_model(small_data):
    Xtr, ytr, Xte, _ = small_data
    model = EpsABRF(n_estimators=6, min_samples_leaf=5, eps=0.0, tau=0.5, random_state=0).fit(Xtr, ytr)
    assert model.solve_result_ is None
    np.testing.assert_allclose(model.w_, np.full(6, 1 / 6))
    expected = _brute_predict(model.forest_, Xtr, ytr, Xte, 0.0, 0.5, np.zeros(6))
    np.testing.assert_allclose(model.predict(Xte), expected, rtol=1e-10)


def test_is_a_scikit_learn_regressor(small_data):
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    Xtr, ytr, _, _ = small_data
    model = EpsABRF(n_estimators=5, min_samples_leaf=5, random_state=0)
    assert clone(model).get_params() == model.get_params()
    scores = cross_val_score(model, Xtr, ytr, cv=3)
    assert scores.shape == (3,) and np.isfinite(scores).all()


def test_sklearn_estimator_checks():
    """check_estimator passes in full (poor_score tag: 10-row leaves underfit sklearn's tiny data)."""
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(EpsABRF(n_estimators=5, min_samples_leaf=1, random_state=0))
