"""scikit-learn face of the families: fit a forest, build the family's problem, solve, predict."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from afr_cli.forests import ForestSpec, LeafStatistics
from afr_cli.models.base import Family
from afr_cli.solve import DEFAULT_SOLVER, SolveResult, solve


class AttentionForestRegressor(RegressorMixin, BaseEstimator):
    """Base of the model estimators; subclasses set ``family`` and list their parameters in __init__.

    Fitted: ``forest_`` (the scikit-learn ensemble), ``leaf_stats_``, ``theta_`` (trained
    parameters, None when nothing is trained), ``solve_result_`` and the family's named views.
    No feature scaling happens here: the protocol scales, the estimator uses X as given.
    """

    family: ClassVar[Family]

    def _forest_spec(self) -> ForestSpec:
        return ForestSpec(self.base, self.n_estimators, self.min_samples_leaf, self.max_features)

    def _values(self, names: tuple[str, ...]) -> dict[str, float]:
        params = self.get_params(deep=False)
        return {n: self.family.param(n).check(params[n], f"{type(self).__name__}.{n}") for n in names}

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        self.forest_ = self._forest_spec().fit(X, y, self.random_state)
        self.leaf_stats_ = LeafStatistics(self.forest_, X, y)
        design, mixing = self._values(self.family.design_names()), self._values(self.family.mixing_names())
        feats = self.family.features(self.leaf_stats_.rows(), design)
        problem = self.family.training_problem(feats, y, mixing)
        self.solve_result_: SolveResult | None = (
            solve(problem, loss=self.loss, solver=self.solver) if problem is not None else None)
        self.theta_ = None if self.solve_result_ is None else self.solve_result_.theta
        for name, value in self.family.fitted_attributes(feats, mixing, self.theta_).items():
            setattr(self, name, value)
        return self

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "forest_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        design, mixing = self._values(self.family.design_names()), self._values(self.family.mixing_names())
        feats = self.family.features(self.leaf_stats_.rows(X), design)
        return self.family.predict(feats, mixing, self.theta_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # min_samples_leaf=10 forests underfit sklearn's tiny checks
        return tags


DEFAULTS = dict(base="rf", n_estimators=100, min_samples_leaf=10, max_features=1.0,
                loss="l2", solver=DEFAULT_SOLVER, random_state=None)
