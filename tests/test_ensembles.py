"""The ensemble registry: every ensemble's contract, our GBM against scikit-learn's, the adapter,
and an ensemble of one's own named module:Class in a config."""

from __future__ import annotations

import os

import numpy as np
import pytest
import yaml
from conftest import assert_one_line_error, run_afr
from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor, RandomForestRegressor
from sklearn.tree import BaseDecisionTree

from afr_cli.ensembles import ENSEMBLES, OWN, TRAINING_MEAN, FittedEnsemble, from_fitted, get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.errors import AfrInputError
from afr_cli.store import load_results

SMALL = {
    "rf": {"n_estimators": 6},
    "ert": {"n_estimators": 6},
    "dt": {},
    "gbm-dt": {"n_estimators": 15, "learning_rate": 0.1},
    "gbm-ert": {"n_estimators": 15, "learning_rate": 0.1},
}


@pytest.mark.parametrize("name", list(ENSEMBLES))
def test_every_ensemble_keeps_the_contract(small_data, name):
    """predict = intercept + sum_t weight_t tree_t; apply gives leaves; LeafStatistics takes the
    declared values and intercept, so the uniform attention 1/T gives the ensemble's prediction."""
    Xtr, ytr, Xte, _ = small_data
    fitted = get_ensemble(name).fit(Xtr, ytr, 3, min_samples_leaf=5, **SMALL[name])
    T = fitted.n_trees
    assert all(isinstance(t, BaseDecisionTree) for t in fitted.trees) and len(fitted.tree_weights) == T
    by_trees = fitted.intercept + sum(w * t.predict(Xte) for w, t in zip(fitted.tree_weights, fitted.trees))
    np.testing.assert_allclose(fitted.predict(Xte), by_trees, rtol=1e-12, atol=1e-12)
    leaves = fitted.apply(Xte)
    assert leaves.shape == (len(Xte), T)
    assert all(np.all(t.tree_.children_left[leaves[:, k]] == -1) for k, t in enumerate(fitted.trees))
    stats = LeafStatistics(fitted, Xtr, ytr)
    assert stats.intercept == fitted.intercept
    B = stats.rows(Xte).values
    if fitted.leaf_values == TRAINING_MEAN:  # the mean target of every training row in the leaf
        train_leaves = fitted.apply(Xtr)
        expected = np.array(
            [[ytr[train_leaves[:, k] == leaves[i, k]].mean() for k in range(T)] for i in range(len(Xte))]
        )
        np.testing.assert_allclose(B, expected, rtol=1e-12)
    else:
        assert fitted.leaf_values == OWN
        np.testing.assert_allclose(
            B, np.column_stack([T * w * t.predict(Xte) for w, t in zip(fitted.tree_weights, fitted.trees)]), rtol=1e-12
        )
        np.testing.assert_allclose(stats.intercept + B.mean(axis=1), fitted.predict(Xte), rtol=1e-10)


def test_forests_are_scikit_learns_own(small_data):
    Xtr, ytr, Xte, _ = small_data
    for name, cls in (("rf", RandomForestRegressor), ("ert", ExtraTreesRegressor)):
        fitted = get_ensemble(name).fit(Xtr, ytr, 5, n_estimators=7)
        sk = cls(n_estimators=7, min_samples_leaf=10, max_features=1.0, random_state=5).fit(Xtr, ytr)
        assert isinstance(fitted.model, cls)
        np.testing.assert_array_equal(fitted.predict(Xte), sk.predict(Xte))
        np.testing.assert_array_equal(fitted.tree_weights, np.full(7, 1 / 7))


@pytest.mark.parametrize("depth, rate, leaf", [(3, 0.1, 1), (5, 0.01, 10), (None, 0.3, 5)])
def test_gbm_with_decision_trees_predicts_as_scikit_learn(depth, rate, leaf):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=160, noise=1.0, random_state=0)
    sk = GradientBoostingRegressor(
        n_estimators=40, learning_rate=rate, max_depth=depth, min_samples_leaf=leaf, random_state=0
    ).fit(X[:120], y[:120])
    ours = get_ensemble("gbm-dt").fit(
        X[:120], y[:120], 0, n_estimators=40, learning_rate=rate, max_depth=depth, min_samples_leaf=leaf
    )
    assert ours.intercept == pytest.approx(y[:120].mean())
    np.testing.assert_allclose(ours.predict(X[120:]), sk.predict(X[120:]), rtol=0, atol=1e-10)


def test_gbm_is_deterministic_in_its_seed_and_erts_vary_with_it(small_data):
    Xtr, ytr, Xte, _ = small_data
    fit = lambda seed: get_ensemble("gbm-ert").fit(Xtr, ytr, seed, n_estimators=10)  # noqa: E731
    np.testing.assert_array_equal(fit(1).predict(Xte), fit(1).predict(Xte))
    assert not np.array_equal(fit(1).predict(Xte), fit(2).predict(Xte))


def test_adapter_views_fitted_scikit_learn_models(small_data):
    Xtr, ytr, Xte, _ = small_data
    gbr = GradientBoostingRegressor(n_estimators=12, learning_rate=0.2, max_depth=2, random_state=0).fit(Xtr, ytr)
    view = from_fitted(gbr)
    assert (view.n_trees, view.leaf_values, view.intercept) == (12, OWN, pytest.approx(ytr.mean()))
    np.testing.assert_allclose(view.predict(Xte), gbr.predict(Xte), atol=1e-12)
    stats = LeafStatistics(gbr, Xtr, ytr)  # LeafStatistics adapts on its own
    np.testing.assert_allclose(stats.intercept + stats.rows(Xte).values.mean(axis=1), gbr.predict(Xte), atol=1e-10)
    rf = RandomForestRegressor(n_estimators=3, random_state=0).fit(Xtr, ytr)
    assert from_fitted(rf).model is rf and from_fitted(rf).leaf_values == TRAINING_MEAN
    with pytest.raises(AfrInputError, match="not fitted"):
        from_fitted(GradientBoostingRegressor())
    from sklearn.linear_model import LinearRegression

    with pytest.raises(AfrInputError, match="cannot put attention on it"):
        from_fitted(LinearRegression().fit(Xtr, ytr))
    linear_init = GradientBoostingRegressor(n_estimators=3, init=LinearRegression()).fit(Xtr, ytr)
    with pytest.raises(AfrInputError, match="constant"):
        from_fitted(linear_init)


def test_fitted_ensemble_checks_its_weights():
    with pytest.raises(ValueError, match="3 trees need 3 tree weights"):
        FittedEnsemble([object()] * 3, np.ones(2))


def test_unknown_ensembles_are_named_errors():
    with pytest.raises(AfrInputError, match="unknown ensemble 'xgb'; allowed: rf, ert, dt, gbm-dt, gbm-ert"):
        get_ensemble("xgb", "bases[0].kind")


ENSEMBLE_MODULE = '''
import numpy as np
from sklearn.ensemble import RandomForestRegressor

from afr_cli.ensembles import Ensemble, FittedEnsemble
from afr_cli.ensembles.random_forests import forest_ensemble
from afr_cli.core.params import ENSEMBLE, Param


class ShallowForest(Ensemble):
    """A random forest of depth-limited trees: an ensemble a researcher might add."""

    name = "shallow-rf"
    summary = "random forest, max_depth 3"
    params = (Param("n_estimators", ENSEMBLE, 100, 1, None, integer=True),)

    def fit(self, X, y, seed, **params):
        p = self.with_defaults(params)
        forest = RandomForestRegressor(n_estimators=p["n_estimators"], max_depth=3, min_samples_leaf=10,
                                       max_features=1.0, random_state=seed, n_jobs=1)
        return forest_ensemble(forest.fit(X, y))


class NotAnEnsemble:
    name = "nope"
'''


def _config(tmp_path, kind: str, **extra) -> str:
    cfg = {
        "name": "own-ensemble",
        "seed": 4,
        "protocol": {"reps": 2},
        "datasets": ["Friedman1"],
        "bases": [{"kind": kind, "n_estimators": 8, **extra}],
        "models": [
            {"id": "forest", "family": "forest"},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0]}},
        ],
    }
    path = tmp_path / "own.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


@pytest.mark.slow
def test_an_ensemble_of_ones_own_runs_in_workers(tmp_path):
    (tmp_path / "my_ensembles.py").write_text(ENSEMBLE_MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "store"
    proc = run_afr(
        "run", _config(tmp_path, "my_ensembles:ShallowForest"), "--out", str(out), "--jobs", "2", "-q", env=env
    )
    assert proc.returncode == 0, proc.stderr
    rows = load_results(out)
    assert set(rows.base) == {"SHALLOW-RF@8"}  # the default id: the ensemble's name, @T off the default
    assert len(rows) == 4 and rows.r2.notna().all()
    assert_one_line_error(
        run_afr("validate", _config(tmp_path, "my_ensembles:ShallowForest", max_depth=2), env=env),
        "bases[0].max_depth",
        "unknown key",
        "allowed for kind shallow-rf: id, kind, n_estimators",
    )
    assert_one_line_error(
        run_afr("validate", _config(tmp_path, "my_ensembles:NotAnEnsemble"), env=env),
        "bases[0].kind",
        "not a concrete subclass of afr_cli.ensembles.Ensemble",
    )
    assert_one_line_error(
        run_afr("validate", _config(tmp_path, "no_such_module:X"), env=env),
        "bases[0].kind",
        "cannot import module 'no_such_module'",
        "PYTHONPATH",
    )
