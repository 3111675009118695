"""A unit's fixed costs cut without moving a bit: pinned against the path they replace.

The boosting loop (``ensembles/gbm.py``) checked every learner's residual with scikit-learn's
``check_array`` (about 0.1 ms a learner, a third of an extremely randomised learner's fit);
``_checked_residual`` returns a finite one-column float64 residual as it is, which is what the
check returns for it (the same object), and hands anything else to the check, so a NaN, an
infinity or an empty residual fails as before. Pinned here: the check's answer for every kind
of residual, and whole GBM fits on the fast path against scikit-learn's own ``fit``/``predict``
per learner (the ``sklearn`` tree path) over learners, seeds, tiny and tied data.

``LeafStatistics`` built its leaf-by-row membership through scipy's COO to CSR conversion and
summed it for the counts; ``membership_matrix`` builds the same CSR arrays with one compiled
counting sort, and the counts are its row lengths. Pinned here against the COO construction:
leaves laid out by column (forests) and by row (boosting, single trees), one row, one tree, empty
leaves, every leaf id out of range refused as scipy refuses it, and whole leaf statistics (means,
counts, values, a sparse product as robust.py takes it) of fitted ensembles of every kind.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor
from sklearn.utils import check_array

from afr_cli.ensembles import gbm, get_ensemble
from afr_cli.ensembles import leaf_statistics as ls
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.ensembles.tree_path import FAST, SKLEARN, use_tree_path


def _check(residual: np.ndarray) -> np.ndarray:
    return check_array(residual, ensure_2d=False, dtype=None)


@pytest.mark.parametrize(
    "residual",
    [np.array([0.5]), np.linspace(-3.0, 3.0, 17), np.zeros(4), np.array([1e308, -1e308]), np.arange(9.0)[::2]],
)
def test_a_finite_residual_is_what_the_check_returns_for_it(residual):
    got = gbm._checked_residual(residual, check_array)
    want = _check(residual)
    assert got is residual and want is residual


@pytest.mark.parametrize(
    "residual", [np.array([1.0, np.nan]), np.array([np.inf, 0.0]), np.array([-np.inf]), np.zeros(0)]
)
def test_a_residual_the_check_refuses_is_refused_with_its_words(residual):
    with pytest.raises(ValueError) as want:
        _check(residual)
    with pytest.raises(ValueError) as got:
        gbm._checked_residual(residual, check_array)
    assert str(got.value) == str(want.value)


def test_the_fast_loop_checks_no_finite_residual(monkeypatch):
    """On the old loop every learner's residual went through ``check_array`` (here 6 calls)."""
    import sklearn.utils

    calls = []
    original = sklearn.utils.check_array
    monkeypatch.setattr(sklearn.utils, "check_array", lambda a, **k: calls.append(k) or original(a, **k))
    X, y = _data(30, 3, ties=False, seed=1)
    with use_tree_path(FAST):
        gbm.boost(X, y, DecisionTreeRegressor, 0, 6, 0.1, 3, 1, 1.0)
    assert [k for k in calls if k.get("ensure_2d") is False] == []
    assert len(calls) == 1  # X, once, as before


def _data(n: int, m: int, ties: bool, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, m)).astype(float) if ties else rng.normal(size=(n, m))
    y = rng.integers(0, 2, n).astype(float) if ties else X[:, 0] - 2 * X[:, -1] + rng.normal(size=n)
    return X, y


def _fit_bytes(path: str, learner: type, X, y, seed, **params) -> list[bytes]:
    with use_tree_path(path):
        fitted = gbm.boost(X, y, learner, seed, **params)
    stats = LeafStatistics(fitted, X, y)
    out = [fitted.predict(X).tobytes(), stats.train_leaves.tobytes(), stats.leaf_value.tobytes()]
    return out + [tree.tree_.value.tobytes() + tree.tree_.threshold.tobytes() for tree in fitted.trees]


@pytest.mark.parametrize("learner", [DecisionTreeRegressor, ExtraTreeRegressor])
@pytest.mark.parametrize("n, m, ties", [(2, 1, False), (7, 2, True), (40, 3, False), (61, 5, True)])
def test_gbm_fits_on_the_fast_path_are_scikit_learns_bytes(learner, n, m, ties):
    X, y = _data(n, m, ties, seed=n)
    params = dict(n_estimators=12, learning_rate=0.3, max_depth=3, min_samples_leaf=1, max_features=1.0)
    for seed in (0, 5):
        assert _fit_bytes(FAST, learner, X, y, seed, **params) == _fit_bytes(SKLEARN, learner, X, y, seed, **params)


def test_a_target_with_nan_fails_on_the_fast_path_as_before():
    X, y = _data(10, 2, ties=False, seed=3)
    y[4] = np.nan
    with use_tree_path(FAST), pytest.raises(ValueError, match="Input contains NaN"):
        gbm.boost(X, y, DecisionTreeRegressor, 0, 3, 0.1, 2, 1, 1.0)


def _coo_membership(leaves: np.ndarray, n_nodes: int) -> sp.csr_matrix:
    """The construction ``LeafStatistics`` used before ``membership_matrix``."""
    n, T = leaves.shape
    return sp.csr_matrix((np.ones(n * T), (leaves.T.ravel(), np.tile(np.arange(n), T))), shape=(n_nodes, n))


def _csr_parts(m: sp.csr_matrix) -> list:
    parts = [m.shape, m.indptr.dtype, m.indices.dtype, m.data.dtype]
    return parts + [m.indptr.tobytes(), m.indices.tobytes(), m.data.tobytes()]


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("n, T, per_tree", [(1, 1, 1), (1, 7, 3), (9, 1, 5), (50, 4, 3), (33, 130, 40)])
def test_the_membership_matrix_is_the_coo_constructions(order, n, T, per_tree):
    rng = np.random.default_rng(n * T)
    leaves = rng.integers(0, per_tree, (n, T)) + per_tree * np.arange(T)  # every tree its own id range
    leaves = np.asarray(leaves, order=order)
    for n_nodes in (per_tree * T, per_tree * T + 6):  # with ids no row reaches (internal nodes)
        got, want = ls.membership_matrix(leaves, n_nodes), _coo_membership(leaves, n_nodes)
        assert _csr_parts(got) == _csr_parts(want)
        assert np.asarray(got.sum(axis=1)).ravel().tobytes() == np.diff(got.indptr).astype(float).tobytes()


@pytest.mark.parametrize("bad", [-1, 12])
def test_a_leaf_id_out_of_range_is_refused_as_scipy_refuses_it(bad):
    leaves = np.array([[0, 6], [bad, 7]])
    with pytest.raises(ValueError) as want:
        _coo_membership(leaves, 12)
    with pytest.raises(ValueError) as got:
        ls.membership_matrix(leaves, 12)
    assert str(got.value) == str(want.value)


def test_the_compiled_count_is_the_one_taken():
    leaves = np.asfortranarray(np.array([[0, 2], [1, 2], [0, 3]]))
    assert ls.membership_matrix(leaves, 4).indices.tolist() == [0, 2, 1, 0, 1, 2]
    ls._KERNELS.clear()
    ls.membership_matrix(leaves, 4)
    assert sorted(ls._KERNELS) == ["members"]


def _old_statistics(stats: LeafStatistics) -> list[bytes]:
    """Means and counts as the COO path computed them, over the same leaves."""
    m = _coo_membership(stats.train_leaves, stats.n_nodes)
    counts = np.asarray(m.sum(axis=1)).ravel()
    safe = np.maximum(counts, 1)[:, None]
    mean_x = np.asarray(m @ stats.X) / safe
    mean_y = np.asarray(m @ stats.y[:, None]).ravel() / safe.ravel()
    return [counts.tobytes(), mean_x.tobytes(), mean_y.tobytes(), np.asarray(m @ (stats.y**2)[:, None]).tobytes()]


@pytest.mark.parametrize(
    "kind, params",
    [
        ("rf", {"n_estimators": 5, "min_samples_leaf": 2}),
        ("ert", {"n_estimators": 5}),
        ("dt", {"min_samples_leaf": 1}),
        ("gbm-dt", {"n_estimators": 6}),
        ("gbm-ert", {"n_estimators": 6, "max_depth": 2}),
    ],
)
@pytest.mark.parametrize("n, ties", [(3, False), (25, True), (60, False)])
def test_leaf_statistics_of_every_kind_are_the_coo_paths(kind, params, n, ties):
    X, y = _data(n, 3, ties, seed=n + 1)
    for seed in (0, 3):
        stats = LeafStatistics(get_ensemble(kind).fit(X, y, seed, **params), X, y)
        m = stats.membership
        got = [stats.counts.tobytes(), stats.mean_x.tobytes(), stats.mean_y.tobytes()]
        got.append(np.asarray(m @ (stats.y**2)[:, None]).tobytes())
        assert got == _old_statistics(stats)
        assert _csr_parts(m) == _csr_parts(_coo_membership(stats.train_leaves, stats.n_nodes))
        assert stats.counts.dtype == np.float64 and stats.counts.shape == (stats.n_nodes,)
