"""scikit-learn face of the families: fit a base ensemble, build the family's problem, solve, predict."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from afr_cli.core.plugin_registry import checked_predictions
from afr_cli.ensembles import Ensemble, get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.errors import AfrInputError, InvalidParameterError
from afr_cli.models.base import Family
from afr_cli.solvers.names import check_loss, check_solver
from afr_cli.solvers.solve import DEFAULT_SOLVER, SolveResult, solve


class AttentionForestRegressor(RegressorMixin, BaseEstimator):
    """Base of the model estimators; subclasses set ``family`` and list their parameters in __init__.

    The base is looked up in the ensemble registry (``base``: rf, ert, dt, gbm-dt, gbm-ert or
    module:Class); of ``n_estimators``, ``min_samples_leaf`` and ``max_features`` it takes those
    it has. Fitted: ``forest_`` (the FittedEnsemble; ``forest_.model`` is the scikit-learn forest
    of an RF/ERT), ``leaf_stats_``, ``theta_`` (trained
    parameters, None when nothing is trained), ``solve_result_`` and the family's named views.
    No feature scaling happens here: the protocol scales, the estimator uses X as given.
    """

    family: ClassVar[Family]

    def _ensemble(self) -> tuple[Ensemble, dict]:
        """The registered ensemble of ``base`` and its checked parameters from this estimator's."""
        name = type(self).__name__
        ensemble = get_ensemble(self.base, f"{name}.base")
        params = self.get_params(deep=False)
        given = {k: params[k] for k in ensemble.param_names() if k in params}
        return ensemble, ensemble.check_params(given, name)

    def _fit_ensemble(self, X: np.ndarray, y: np.ndarray):
        """The fitted base ensemble (the adapter estimators take one fitted elsewhere instead)."""
        ensemble, params = self._ensemble()
        return ensemble.fit(X, y, self.random_state, **params)

    def _values(self, names: tuple[str, ...]) -> dict[str, float]:
        params = self.get_params(deep=False)
        return {n: self.family.param(n).check(params[n], f"{type(self).__name__}.{n}") for n in names}

    def fit(self, X, y):
        loss, solver = self._solver_choice()
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        self.forest_ = self._fit_ensemble(X, y)
        if self.forest_.structure not in self.family.structures:
            raise AfrInputError(
                f"{type(self).__name__}: {self.family.name} cannot attend over a "
                f"{self.forest_.structure} ensemble; it takes {' or '.join(self.family.structures)} ones"
            )
        self.leaf_stats_ = LeafStatistics(self.forest_, X, y)
        design, mixing = self._values(self.family.design_names()), self._values(self.family.mixing_names())
        feats = self.family.features(self.leaf_stats_.rows(), design)
        problem = self.family.training_problem(feats, y, mixing)
        self.solve_result_: SolveResult | None = (
            solve(problem, loss=loss, solver=solver) if problem is not None else None
        )
        self.theta_ = None if self.solve_result_ is None else self.solve_result_.theta
        for name, value in self.family.fitted_attributes(feats, mixing, self.theta_).items():
            setattr(self, name, value)
        return self

    def _solver_choice(self) -> tuple[str, str]:
        """``loss`` and ``solver`` checked as a config's are: an unknown name is a ValueError
        naming the estimator's parameter, never a silent fallback to another solver."""
        name = type(self).__name__
        loss = check_loss(self.loss, f"{name}.loss", InvalidParameterError)
        return loss, check_solver(self.solver, f"{name}.solver", InvalidParameterError)

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "forest_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        design, mixing = self._values(self.family.design_names()), self._values(self.family.mixing_names())
        feats = self.family.features(self.leaf_stats_.rows(X), design)
        return checked_predictions(self.family.name, self.family.predict(feats, mixing, self.theta_), X.shape[0])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # min_samples_leaf=10 forests underfit sklearn's tiny checks
        return tags


DEFAULTS = dict(
    base="rf",
    n_estimators=100,
    min_samples_leaf=10,
    max_features=1.0,
    loss="l2",
    solver=DEFAULT_SOLVER,
    random_state=None,
)
