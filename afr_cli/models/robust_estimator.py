"""``RobustRF``: the robust interval-weighted RF as a scikit-learn regressor."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from afr_cli.errors import AfrInputError
from afr_cli.models.base import Family
from afr_cli.models.estimator import AttentionForestRegressor
from afr_cli.models.robust import LEAF_STATS, ROBUST_FAMILIES
from afr_cli.solvers.solve import DEFAULT_SOLVER


class RobustRF(AttentionForestRegressor):
    """Tree weights w minimising the pessimistic interval cost c.w + lam ||w||^2 over W(eps).

    Fitted: ``forest_``, ``costs_`` (c_l, the mean per training row of the worst-case absolute
    error of tree l), ``w_`` (length T). ``leaf_stats`` "bootstrap" (each tree's own sample; eps = 0
    is scikit-learn's RF) or "train" (all training rows in the leaf). alpha must lie in (0, 1).
    """

    loss = "l2"  # unused: the weights problem fixes its own form (LP at lam = 0, QP otherwise)

    def __init__(
        self,
        alpha: float = 0.05,
        eps: float = 0.5,
        lam: float = 0.0,
        leaf_stats: str = "bootstrap",
        base: str = "rf",
        n_estimators: int = 100,
        min_samples_leaf: int = 1,
        max_features: float = 1.0,
        solver: str = DEFAULT_SOLVER,
        random_state=None,
    ):
        self.alpha = alpha
        self.eps = eps
        self.lam = lam
        self.leaf_stats = leaf_stats
        self.base = base
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.solver = solver
        self.random_state = random_state

    @property
    def family(self) -> Family:
        if self.leaf_stats not in ROBUST_FAMILIES:
            raise AfrInputError(
                f"RobustRF.leaf_stats: {self.leaf_stats!r} is not allowed; allowed: {', '.join(LEAF_STATS)}"
            )
        return ROBUST_FAMILIES[self.leaf_stats]

    def fit(self, X, y):
        ensemble, _ = self._ensemble()
        if ensemble.structure not in self.family.structures:  # leaf values must be target means
            raise AfrInputError(
                f"RobustRF.base: {self.base!r} is a {ensemble.structure} ensemble; the robust RF "
                f"weights the trees of {' or '.join(self.family.structures)} ensembles (rf, ert, dt)"
            )
        super().fit(X, y)
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64, reset=False)
        feats = self.family.features(self.leaf_stats_.rows(), self._values(self.family.design_names()))
        self.costs_ = self.family.costs(feats, y).copy()  # the family keeps its own (read-only)
        return self
