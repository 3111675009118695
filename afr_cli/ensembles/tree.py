"""One decision tree (dt): a one-tree ensemble, e.g. for the Decision Machines.

Its fit is scikit-learn's on either tree path (one tree has no per-tree overhead to skip); on the
fast path (``afr_cli.ensembles.tree_path``) it applies and predicts without re-validating X per
call of each tree (``FittedEnsemble.fast``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from afr_cli.ensembles.base import AVERAGE, TRAINING_MEAN, Ensemble, FittedEnsemble
from afr_cli.ensembles.params import MAX_DEPTH, MAX_FEATURES, MIN_SAMPLES_LEAF
from afr_cli.ensembles.tree_path import fast_trees


def tree_ensemble(tree, fast: bool = False) -> FittedEnsemble:
    """A fitted scikit-learn tree as a one-tree FittedEnsemble (weight 1, training-mean leaves);
    ``fast``: it applies and predicts on the fast tree path."""
    return FittedEnsemble([tree], np.ones(1), 0.0, TRAINING_MEAN, AVERAGE, model=tree, fast=fast)


class DecisionTree(Ensemble):
    name = "dt"
    summary = "a single CART regression tree"
    params = (MIN_SAMPLES_LEAF, MAX_DEPTH, MAX_FEATURES)
    structure = AVERAGE

    def fit(self, X: np.ndarray, y: np.ndarray, seed: int | None, **params: Any) -> FittedEnsemble:
        from sklearn.tree import DecisionTreeRegressor  # imported by a fit, not by a config's check

        p = self.with_defaults(params)
        tree = DecisionTreeRegressor(
            min_samples_leaf=p["min_samples_leaf"],
            max_depth=p["max_depth"],
            max_features=p["max_features"],
            random_state=seed,
        )
        return tree_ensemble(tree.fit(X, y), fast=fast_trees())
