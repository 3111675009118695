"""The papers' models as scikit-learn regressors: EpsABRF, LARF, AGBoost and AGBoostOnFitted.

They live apart from the families they fit (``abrf``, ``larf``, ``agboost``) because a scikit-learn
estimator imports scikit-learn, and scikit-learn imports scipy.stats: ``afr validate`` reads the
families' names and parameters and imports none of it (issue 32). ``afr_cli.models`` exports these
classes when first asked for one.
"""

from __future__ import annotations

import numpy as np

from afr_cli.ensembles import from_fitted
from afr_cli.errors import AfrInputError
from afr_cli.models.abrf import EpsABRFFamily
from afr_cli.models.agboost import LEARNERS, AGBoostFamily
from afr_cli.models.estimator import AttentionForestRegressor
from afr_cli.models.larf import LARFFamily, larf_family
from afr_cli.solvers.solve import DEFAULT_SOLVER


class EpsABRF(AttentionForestRegressor):
    """eps-ABRF: alpha_k = (1-eps) softmax_k(-||x - A_k(x)||^2 / tau) + eps w_k over a RF or ERT.

    ``w_`` (length T) is trained on the simplex by the shared solver (QP for loss="l2", LP
    for "l1"); eps = 0 is the "Softmax" model and leaves ``w_`` uniform and unused.
    """

    family = EpsABRFFamily()

    def __init__(
        self,
        base: str = "rf",
        n_estimators: int = 100,
        min_samples_leaf: int = 10,
        max_features: float = 1.0,
        eps: float = 0.5,
        tau: float = 1.0,
        loss: str = "l2",
        solver: str = DEFAULT_SOLVER,
        random_state=None,
    ):
        self.base = base
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.eps = eps
        self.tau = tau
        self.loss = loss
        self.solver = solver
        self.random_state = random_state


class LARF(AttentionForestRegressor):
    """LARF over a RF or ERT; ``variant`` picks one of the ten models of the paper's Section 5.

    Parameters a variant does not use are ignored: tau0 (ARF variants), M (all but em-),
    eps (all but w-: the others train it), varsigma (w-, eps-). Fitted: ``taus_``, ``eps_``
    and ``w_`` with yhat = mean_j (1-eps_j) S_j + mean(eps_) sum_k w_k B_k for every variant.
    """

    def __init__(
        self,
        variant: str = "em-w-larf",
        base: str = "rf",
        tau0: float = 1.0,
        M: int = 1,
        eps: float = 0.5,
        varsigma: float = 1e-3,
        loss: str = "l2",
        solver: str = DEFAULT_SOLVER,
        n_estimators: int = 100,
        min_samples_leaf: int = 10,
        max_features: float = 1.0,
        random_state=None,
    ):
        self.variant = variant
        self.base = base
        self.tau0 = tau0
        self.M = M
        self.eps = eps
        self.varsigma = varsigma
        self.loss = loss
        self.solver = solver
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.random_state = random_state

    @property
    def family(self) -> LARFFamily:
        """The variant's family (the base class reads ``self.family``)."""
        return larf_family(self.variant, "LARF.variant")


class AGBoost(AttentionForestRegressor):
    """AGBoost over our GBM (``learner`` "dt" or "ert"): w_ (length T) trained on the simplex.

    Fitted: ``trees_`` (the T scikit-learn trees, in order), ``init_`` (h0), ``w_``, and as every
    estimator ``forest_`` (the FittedEnsemble) and ``leaf_stats_``. No feature scaling here.
    """

    family = AGBoostFamily()

    def __init__(
        self,
        learner: str = "dt",
        n_estimators: int = 200,
        learning_rate: float = 0.01,
        max_depth: int = 5,
        min_samples_leaf: int = 10,
        eps: float = 0.5,
        delta: float = 0.9,
        loss: str = "l2",
        solver: str = DEFAULT_SOLVER,
        random_state=None,
    ):
        self.learner = learner
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.eps = eps
        self.delta = delta
        self.loss = loss
        self.solver = solver
        self.random_state = random_state

    @property
    def base(self) -> str:
        if self.learner not in LEARNERS:
            raise AfrInputError(f"AGBoost.learner: {self.learner!r} is not allowed; allowed: {', '.join(LEARNERS)}")
        return f"gbm-{self.learner}"

    def fit(self, X, y):
        super().fit(X, y)
        self.trees_, self.init_ = self.forest_.trees, self.forest_.intercept
        return self


class AGBoostOnFitted(AttentionForestRegressor):
    """AGBoost's attention on a boosted model fitted elsewhere (a scikit-learn
    GradientBoostingRegressor, see ``ensembles.from_fitted``): ``fit(X, y)`` trains w on the
    rows given, normally the model's own training rows, and leaves ``estimator`` untouched."""

    family = AGBoostFamily()

    def __init__(
        self, estimator=None, eps: float = 0.5, delta: float = 0.9, loss: str = "l2", solver: str = DEFAULT_SOLVER
    ):
        self.estimator = estimator
        self.eps = eps
        self.delta = delta
        self.loss = loss
        self.solver = solver

    def _fit_ensemble(self, X: np.ndarray, y: np.ndarray):
        return from_fitted(self.estimator)
