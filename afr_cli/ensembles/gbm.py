"""Gradient boosting with squared loss over DT or ERT learners (gbm-dt, gbm-ert): our own loop.

    h0 = mean(y);  g_t = g_{t-1} + learning_rate * h_t,  h_t fit to the residuals y - g_{t-1}

scikit-learn's GradientBoostingRegressor cannot take extremely randomised learners, hence the
loop. Randomness as scikit-learn's GBM: one RandomState seeded with the unit's seed is handed to
every learner, so learner t takes the t-th draw of that stream (a function of (seed, t) alone,
whatever the worker count); with DT learners the trees are then scikit-learn's own, ties between
equally good splits included (tests/test_ensembles.py). Leaf values for the attention are
T * learning_rate * h_t (AGBoost paper eq 11), the intercept h0.

On the fast tree path (the default, ``afr_cli.ensembles.tree_path``) X is validated once, as
each learner's own ``fit`` and ``predict`` would validate it (float32, same layout), and every
learner is fitted and predicts on that (``check_input=False``): the same trees, bit for bit
(tests/test_fast_trees.py), without converting X twice per learner.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from afr_cli.core.params import ENSEMBLE, Param
from afr_cli.ensembles.base import BOOSTED, OWN, Ensemble, FittedEnsemble, SklearnClass
from afr_cli.ensembles.params import MAX_FEATURES, MAX_TREES, MIN_SAMPLES_LEAF
from afr_cli.ensembles.tree_path import fast_trees

ITERATIONS = Param("n_estimators", ENSEMBLE, 200, 1, MAX_TREES, integer=True, doc="boosting iterations T")
LEARNING_RATE = Param("learning_rate", ENSEMBLE, 0.01, 0.0, None, low_open=True, doc="constant shrinkage")
DEPTH = Param(
    "max_depth", ENSEMBLE, 5, 1, None, integer=True, choices=(None,), doc="depth of each learner (null = unlimited)"
)


def boost(
    X: np.ndarray,
    y: np.ndarray,
    learner: type,
    seed: int | None,
    n_estimators: int,
    learning_rate: float,
    max_depth: int | None,
    min_samples_leaf: int,
    max_features: Any,
) -> FittedEnsemble:
    """The boosting loop; ``learner`` is a scikit-learn tree class, all drawing from one stream."""
    from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor
    from sklearn.utils import check_array, check_random_state

    from afr_cli.ensembles.fast_trees import tree_predict

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    stream = check_random_state(seed)  # an int, None or a RandomState, as scikit-learn takes it
    h0 = float(y.mean())
    fitted = np.full(len(y), h0)
    trees = []
    fast = fast_trees() and learner in (DecisionTreeRegressor, ExtraTreeRegressor)  # not a subclass of one's own
    X32 = missing = None
    for _ in range(n_estimators):
        tree = learner(
            max_depth=max_depth, min_samples_leaf=min_samples_leaf, max_features=max_features, random_state=stream
        )
        if not fast:
            tree.fit(X, y - fitted)
            fitted += learning_rate * tree.predict(X)
        else:
            residual = _checked_residual(y - fitted, check_array)
            if X32 is None:  # what fit makes of X, once: float32 in X's layout, the missing-values mask
                X32 = check_array(X, dtype=np.float32, accept_sparse="csc", ensure_all_finite=False)
                missing = tree._compute_missing_values_in_feature_mask(X32)
            tree._fit(X32, residual, check_input=False, missing_values_in_feature_mask=missing)
            fitted += learning_rate * tree_predict(tree, X32)
        trees.append(tree)
    return FittedEnsemble(trees, np.full(n_estimators, float(learning_rate)), h0, OWN, BOOSTED, fast=fast)


def _checked_residual(residual: np.ndarray, check_array) -> np.ndarray:
    """``residual`` as a learner's ``fit`` checks its y (``check_array(ensure_2d=False,
    dtype=None)``), without the check's cost when it has nothing to say: a non-empty one-column
    float64 array with every value finite comes back from it as the same array (no copy, no
    conversion), and that is what ``y - fitted`` nearly always is. Anything else (NaN or inf, no
    rows) goes through the check itself, so it fails as scikit-learn's own fit does."""
    if residual.ndim == 1 and residual.size and np.isfinite(residual).all():
        return residual
    return check_array(residual, ensure_2d=False, dtype=None)


class _GBM(Ensemble):
    params = (ITERATIONS, LEARNING_RATE, DEPTH, MIN_SAMPLES_LEAF, MAX_FEATURES)
    structure = BOOSTED
    learner: type | SklearnClass

    def fit(self, X: np.ndarray, y: np.ndarray, seed: int | None, **params: Any) -> FittedEnsemble:
        return boost(X, y, self.learner, seed, **self.with_defaults(params))


class BoostedTrees(_GBM):
    name = "gbm-dt"
    summary = "gradient boosting, squared loss, CART learners (h0 = mean y, constant learning rate)"
    learner = SklearnClass("sklearn.tree", "DecisionTreeRegressor")


class BoostedExtraTrees(_GBM):
    name = "gbm-ert"
    summary = "gradient boosting, squared loss, single extremely randomised trees as learners"
    learner = SklearnClass("sklearn.tree", "ExtraTreeRegressor")
