"""scikit-learn's trees without scikit-learn's per-tree Python overhead, byte for byte the same.

``RandomForestRegressor.fit`` spends about a third of its time per tree outside the tree builder:
cloning the template tree, ``get_params``/``set_params``, and a joblib dispatch; ``apply`` and
``predict`` validate X and dispatch through joblib once per tree. Here the forest validates its
input once, exactly as its own ``fit`` does (float32 X in the layout given, y as a contiguous
float64 column, the missing-values mask), and each tree is then built directly with the seed
scikit-learn would draw for it: one ``randint(MAX_INT)`` per tree, in order, from the forest's
``random_state`` (``_set_random_states``), and with bootstrap the same
``_generate_sample_indices`` draw turned into per-row counts passed as sample weights. Both the
bootstrap draw and the tree's own draws come from a ``RandomState`` seeded with the tree's seed;
scikit-learn builds a new one each time (``check_random_state(seed)``, ~0.2 ms, mostly the
constructor's own entropy draw before it is reseeded), here one is reseeded in place (``seed``,
the same legacy seeding, a few microseconds) and lent to the tree for its fit only. Apply and
predict validate X once and call each tree's ``tree_`` directly. The leaf ids of a forest come
out as scikit-learn's ``np.array(per_tree).T``: an F-ordered (n, T) array. The layout matters:
the leaf values indexed by it, B (n, T), keep it, and a sum over trees of an F-ordered B is not
summed pairwise as a C-ordered one is, so a C-ordered copy changes the last bits of every
weighted sum a family takes over trees (tests/test_fast_trees.py shows it).

The fitted forest is a scikit-learn forest like any other: every attribute its own ``fit`` sets is
set, so its own ``predict``/``apply``/pickling work and give the same bytes. tests/test_fast_trees.py
pins all of this against scikit-learn's own path.
"""

from __future__ import annotations

from warnings import warn

import numpy as np
from sklearn import config_context
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.ensemble._bootstrap import _get_n_samples_bootstrap
from sklearn.ensemble._forest import MAX_INT, BaseForest, _generate_sample_indices
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

FOREST_CLASSES = (RandomForestRegressor, ExtraTreesRegressor)


def fits_fast(forest) -> bool:
    """Whether ``fit_forest`` reproduces this unfitted forest's own ``fit`` (a plain regression
    forest: no warm start, no out-of-bag score; anything else is left to scikit-learn)."""
    return (
        type(forest) in FOREST_CLASSES
        and not forest.warm_start
        and not forest.oob_score
        and forest.criterion != "poisson"
        and (forest.bootstrap or forest.max_samples is None)
    )


def fit_forest(forest, X: np.ndarray, y: np.ndarray):
    """Fit an unfitted rf/ert ``forest`` on (X, y) as ``forest.fit(X, y)`` would, tree by tree;
    returns the forest. Forests ``fits_fast`` refuses are fitted by scikit-learn itself."""
    if not fits_fast(forest) or hasattr(X, "tocsc"):
        return forest.fit(X, y)
    forest._validate_params()  # what its fit checks first (a bad parameter fails the same way)
    X, y = validate_data(
        forest, X, y, multi_output=True, accept_sparse="csc", dtype=np.float32, ensure_all_finite=False
    )
    template = type(forest.estimator)(criterion=forest.criterion)
    missing = template._compute_missing_values_in_feature_mask(X, estimator_name=type(forest).__name__)
    y = np.atleast_1d(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape of y to "
            "(n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=2,
        )
    if y.ndim == 1:
        y = np.reshape(y, (-1, 1))  # as scikit-learn: a reshape keeps the data contiguous
    forest._n_samples, forest.n_outputs_ = y.shape
    if y.dtype != np.float64 or not y.flags.contiguous:
        y = np.ascontiguousarray(y, dtype=np.float64)
    forest._sample_weight = None
    n_bootstrap = _get_n_samples_bootstrap(X.shape[0], forest.max_samples, None) if forest.bootstrap else None
    forest._n_samples_bootstrap = n_bootstrap
    forest._validate_estimator()
    stream = check_random_state(forest.random_state)
    tree_class = type(forest.estimator_)
    fixed = {**forest.estimator_.get_params(), **{p: getattr(forest, p) for p in forest.estimator_params}}
    trees = [tree_class(**{**fixed, "random_state": stream.randint(MAX_INT)}) for _ in range(forest.n_estimators)]
    with config_context(skip_parameter_validation=True):  # as inside the forest's own fit
        _fit_trees(trees, X, y, forest.bootstrap, n_bootstrap, missing)
    forest.estimators_ = trees
    return forest


def _fit_trees(
    trees: list, X: np.ndarray, y: np.ndarray, bootstrap: bool, n_bootstrap: int | None, missing: np.ndarray | None
) -> None:
    """Each tree fitted on its bootstrap counts (or every row), drawing from its own seed."""
    n = X.shape[0]
    draws = np.random.RandomState(0)  # reseeded per use: what check_random_state(seed) would build anew
    for tree in trees:
        seed = tree.random_state
        weight = None
        if bootstrap:
            draws.seed(seed)
            weight = np.bincount(_generate_sample_indices(draws, n, n_bootstrap, None), minlength=n)
        draws.seed(seed)
        tree.random_state = draws  # for the fit only: the tree keeps its integer seed
        try:
            tree._fit(X, y, sample_weight=weight, check_input=False, missing_values_in_feature_mask=missing)
        finally:
            tree.random_state = seed


def is_forest(model) -> bool:
    """Whether ``model`` is a scikit-learn forest (its apply gives F-ordered leaves)."""
    return isinstance(model, BaseForest)


def rows_for_trees(model, X: np.ndarray) -> np.ndarray:
    """X validated once as ``model`` (a fitted forest or tree) validates it before its trees see
    it: float32, finite, the fitted number of features."""
    if is_forest(model):
        return model._validate_X_predict(X)
    return model._validate_X_predict(X, check_input=True)


def forest_leaves(trees: list, X32: np.ndarray) -> np.ndarray:
    """Leaf id of every (row, tree), (n, T), F-ordered as a scikit-learn forest's ``apply``."""
    return np.array([tree.tree_.apply(X32) for tree in trees]).T


def stacked_leaves(trees: list, X32: np.ndarray) -> np.ndarray:
    """Leaf id of every (row, tree), (n, T), C-ordered as ``np.column_stack`` of each tree's apply."""
    return np.column_stack([tree.tree_.apply(X32) for tree in trees])


def forest_predict(trees: list, X32: np.ndarray) -> np.ndarray:
    """A forest's prediction as scikit-learn sums it: tree by tree into zeros, then divided by T."""
    y_hat = np.zeros(X32.shape[0], dtype=np.float64)
    for tree in trees:
        y_hat += tree_predict(tree, X32)
    y_hat /= len(trees)
    return y_hat


def tree_predict(tree, X32: np.ndarray) -> np.ndarray:
    """One regression tree's prediction, as its ``predict`` gives it for one output."""
    return tree.tree_.predict(X32)[:, 0]
