"""The papers' models as scikit-learn regressors: EpsABRF, LARF, SATRF, AGBoost and AGBoostOnFitted
(the robust RF's is ``robust_estimator``; their shared base, ``estimator``).

They live apart from the families they fit (``abrf``, ``larf``, ``satrf``, ``agboost``) because a scikit-learn
estimator imports scikit-learn, and scikit-learn imports scipy.stats: ``afr validate`` reads the
families' names and parameters and imports none of it. ``afr_cli.models`` exports these
classes when first asked for one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from afr_cli.ensembles import from_fitted
from afr_cli.errors import AfrInputError
from afr_cli.models.abrf import EpsABRFFamily
from afr_cli.models.agboost import LEARNERS, AGBoostFamily
from afr_cli.models.estimator import AttentionForestRegressor
from afr_cli.models.larf import LARFFamily, larf_family
from afr_cli.models.satrf import SATRFFamily, satrf_family
from afr_cli.solvers.solve import DEFAULT_SOLVER


class EpsABRF(AttentionForestRegressor):
    """eps-ABRF: alpha_k = (1-eps) softmax_k(-||x - A_k(x)||^2 / tau) + eps w_k over a RF or ERT.

    ``w_`` (length T) is trained on the simplex by the shared solver (QP for loss="l2", LP
    for "l1"); eps = 0 is the "Softmax" model and leaves ``w_`` uniform and unused.
    ``reading`` "code": the authors' code's softmax(-tau d / 2) (afr_cli.models.abrf).
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
        reading: str = "text",
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
        self.reading = reading
        self.loss = loss
        self.solver = solver
        self.random_state = random_state


class LARF(AttentionForestRegressor):
    """LARF over a RF or ERT; ``variant`` picks one of the ten models of the paper's Section 5.

    Parameters a variant does not use are ignored: tau0 (ARF variants), M (all but em-),
    eps (all but w-: the others train it), varsigma (w-, eps-). Fitted: ``taus_``, ``eps_``
    and ``w_`` with yhat = mean_j (1-eps_j) S_j + mean(eps_) sum_k w_k B_k for every variant.
    ``reading``: "text" (the paper's equations) or "code" (what the authors' code computes;
    afr_cli.models.larf); under "code", ``taus_`` are the heads' temperatures on the plain
    distance and eps_j = 1 - M g_j of the free head weights g_j.
    """

    def __init__(
        self,
        variant: str = "em-w-larf",
        base: str = "rf",
        tau0: float = 1.0,
        M: int = 1,
        eps: float = 0.5,
        varsigma: float = 1e-3,
        reading: str = "text",
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
        self.reading = reading
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


class SATRF(AttentionForestRegressor):
    """SAT-RF-y / -x / -yx over a RF or ERT; ``heads`` stacked self-attentions (Section 6).

    With heads = 1 ``gamma`` and ``kappa`` are numbers; with heads = h they are h-tuples (head 1
    first). Fitted: ``w_`` (T,), ``v_`` ((T,) for one head, (h, T) otherwise), trained jointly on
    simplices by the shared solver (QP for loss="l2", LP for "l1"); eps = gamma = 0 is the
    tables' "Softmax" model and trains nothing. ``reading`` "code": what the authors' code computes
    (afr_cli.models.satrf).
    """

    def __init__(
        self,
        variant: str = "y",
        base: str = "rf",
        eps: float = 0.5,
        gamma: float | Sequence[float] = 0.5,
        tau: float = 1.0,
        kappa: float | Sequence[float] = 1.0,
        loss: str = "l2",
        solver: str = DEFAULT_SOLVER,
        n_estimators: int = 100,
        min_samples_leaf: int = 10,
        max_features: float = 1.0,
        random_state=None,
        heads: int = 1,
        reading: str = "text",
    ):
        self.variant = variant
        self.base = base
        self.eps = eps
        self.gamma = gamma
        self.tau = tau
        self.kappa = kappa
        self.loss = loss
        self.solver = solver
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.heads = heads
        self.reading = reading

    @property
    def family(self) -> SATRFFamily:
        return satrf_family(self.variant, self.heads)

    def _values(self, names: tuple[str, ...]) -> dict[str, float]:
        labelled = {"eps": ("eps", self.eps), "tau": ("tau", self.tau), "reading": ("reading", self.reading)}
        labelled.update(zip(self.family.gamma_names(), self._per_head("gamma", self.gamma)))
        labelled.update(zip(self.family.kappa_names(), self._per_head("kappa", self.kappa)))
        return {n: self.family.param(n).check(labelled[n][1], f"SATRF.{labelled[n][0]}") for n in names}

    def _per_head(self, param: str, value) -> list[tuple[str, object]]:
        """(label, value) per head: the number itself for one head, else the tuple's items."""
        if self.heads == 1:
            return [(param, value)]
        if not isinstance(value, (list, tuple, np.ndarray)) or np.ndim(value) != 1 or len(value) != self.heads:
            raise AfrInputError(
                f"SATRF.{param}: {value!r} is not allowed; with heads={self.heads} "
                f"give {self.heads} numbers, one per head"
            )
        return [(f"{param}[{j}]", v) for j, v in enumerate(value)]
