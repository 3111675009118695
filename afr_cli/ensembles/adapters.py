"""Fitted scikit-learn models as FittedEnsembles, so attention can be put on a user's own model.

Covered: RandomForestRegressor / ExtraTreesRegressor (training-mean leaves, weights 1/T), a
single DecisionTreeRegressor / ExtraTreeRegressor, and GradientBoostingRegressor with a constant
initial prediction (intercept = that constant, weights = learning_rate, own leaf values
T * learning_rate * h_t). LightGBM is not covered: its first tree absorbs the initial score
(boost_from_average) and its trees are not scikit-learn trees, so neither the intercept nor
``trees`` would mean what they mean here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from afr_cli.ensembles.base import BOOSTED, OWN, FittedEnsemble
from afr_cli.ensembles.random_forests import forest_ensemble
from afr_cli.ensembles.tree import tree_ensemble
from afr_cli.errors import AfrInputError

if TYPE_CHECKING:
    from sklearn.ensemble import GradientBoostingRegressor


def from_fitted(model) -> FittedEnsemble:
    """The FittedEnsemble view of a fitted scikit-learn regressor (see the module doc)."""
    from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor, RandomForestRegressor
    from sklearn.tree import BaseDecisionTree

    if isinstance(model, FittedEnsemble):
        return model
    if not hasattr(model, "n_features_in_"):
        raise AfrInputError(f"{type(model).__name__}: not fitted; fit it before putting attention on it")
    if isinstance(model, (RandomForestRegressor, ExtraTreesRegressor)):
        return forest_ensemble(model)
    if isinstance(model, BaseDecisionTree) and not hasattr(model, "classes_"):
        return tree_ensemble(model)
    if isinstance(model, GradientBoostingRegressor):
        return _boosted(model)
    raise AfrInputError(
        f"{type(model).__name__}: cannot put attention on it; allowed: a fitted "
        "RandomForestRegressor, ExtraTreesRegressor, GradientBoostingRegressor or regression tree"
    )


def _boosted(model: GradientBoostingRegressor) -> FittedEnsemble:
    """scikit-learn's GBM: predict = init + learning_rate * sum_t tree_t (every loss stores its
    final leaf values in the trees), so the additive view is exact when the init is constant."""
    init = model.init_
    if isinstance(init, str) and init == "zero":
        h0 = 0.0
    elif hasattr(init, "constant_"):
        h0 = float(np.ravel(init.constant_)[0])
    else:
        raise AfrInputError(
            f"GradientBoostingRegressor: init={type(init).__name__} gives a non-constant "
            "initial prediction; attention needs a constant one (the default, or 'zero')"
        )
    trees = [stage[0] for stage in model.estimators_]
    return FittedEnsemble(trees, np.full(len(trees), float(model.learning_rate)), h0, OWN, BOOSTED)
