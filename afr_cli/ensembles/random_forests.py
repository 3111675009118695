"""Random forest (rf) and extremely randomised trees (ert): scikit-learn's forests as they are.

On the fast tree path (the default, ``afr_cli.ensembles.tree_path``) the same forest is built
tree by tree without scikit-learn's per-tree overhead (``afr_cli.ensembles.fast_trees``): the
same trees, the same fitted ``RandomForestRegressor``/``ExtraTreesRegressor`` object."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from afr_cli.ensembles.base import AVERAGE, TRAINING_MEAN, Ensemble, FittedEnsemble, SklearnClass
from afr_cli.ensembles.params import MAX_DEPTH, MAX_FEATURES, MIN_SAMPLES_LEAF, N_ESTIMATORS
from afr_cli.ensembles.tree_path import fast_trees


def fits_fast(forest) -> bool:
    """``fast_trees.fits_fast``; the fast path (scikit-learn's internals) is imported by a fit."""
    from afr_cli.ensembles import fast_trees as ft

    return ft.fits_fast(forest)


def fit_forest(forest, X: np.ndarray, y: np.ndarray):
    """``fast_trees.fit_forest``, imported by a fit (a config's check imports no scikit-learn)."""
    from afr_cli.ensembles import fast_trees as ft

    return ft.fit_forest(forest, X, y)


def forest_ensemble(forest, fast: bool = False) -> FittedEnsemble:
    """A fitted scikit-learn forest as a FittedEnsemble: weights 1/T, leaf values the training
    means; ``fast``: it applies and predicts on the fast tree path."""
    T = len(forest.estimators_)
    return FittedEnsemble(forest.estimators_, np.full(T, 1.0 / T), 0.0, TRAINING_MEAN, AVERAGE, model=forest, fast=fast)


def forest_prefix(fitted: FittedEnsemble, n_trees: int) -> FittedEnsemble:
    """The first ``n_trees`` trees of a fitted rf/ert forest as a forest of their own.

    scikit-learn draws every tree's seed in order from the forest's ``random_state`` (one draw per
    tree, before any tree is fit), so under one integer seed a forest of n trees is the first n
    trees of a larger forest, tree for tree; prediction and apply run over ``estimators_`` in order
    (single-threaded). tests/test_shared_work.py pins this, per kind, against forests fitted apart.
    """
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    forest = fitted.model
    if forest is None or not isinstance(forest, (RandomForestRegressor, ExtraTreesRegressor)):
        raise TypeError("forest_prefix needs a fitted rf or ert forest")
    if not 1 <= n_trees <= len(forest.estimators_):
        raise ValueError(f"a prefix of 1..{len(forest.estimators_)} trees, not {n_trees}")
    prefix = copy.copy(forest)  # shallow: the trees themselves are shared, read only
    prefix.estimators_ = forest.estimators_[:n_trees]
    prefix.n_estimators = n_trees
    return forest_ensemble(prefix, fitted.fast)


class _Forest(Ensemble):
    params = (N_ESTIMATORS, MIN_SAMPLES_LEAF, MAX_FEATURES, MAX_DEPTH)
    structure = AVERAGE
    sklearn_class: type | SklearnClass

    def fit(self, X: np.ndarray, y: np.ndarray, seed: int | None, **params: Any) -> FittedEnsemble:
        p = self.with_defaults(params)
        forest = self.sklearn_class(
            n_estimators=p["n_estimators"],
            min_samples_leaf=p["min_samples_leaf"],
            max_features=p["max_features"],
            max_depth=p["max_depth"],
            random_state=seed,
            n_jobs=1,
        )
        if fast_trees() and fits_fast(forest):  # scikit-learn's own classes (not a subclass of one's own)
            return forest_ensemble(fit_forest(forest, X, y), fast=True)
        return forest_ensemble(forest.fit(X, y))  # single-threaded: the runner parallelises units


class RandomForest(_Forest):
    name = "rf"
    summary = "random forest (bootstrap, best split over max_features)"
    sklearn_class = SklearnClass("sklearn.ensemble", "RandomForestRegressor")


class ExtraTrees(_Forest):
    name = "ert"
    summary = "extremely randomised trees (no bootstrap, random thresholds)"
    sklearn_class = SklearnClass("sklearn.ensemble", "ExtraTreesRegressor")
