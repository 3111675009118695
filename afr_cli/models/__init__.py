"""Model families (the papers' models) and their scikit-learn estimators."""

from __future__ import annotations

from afr_cli.core.plugin_registry import import_plugin
from afr_cli.dm import DecisionMachine
from afr_cli.errors import AfrInputError
from afr_cli.models.abrf import EpsABRFFamily
from afr_cli.models.agboost import AGBoost, AGBoostFamily, AGBoostOnFitted, NonParamFamily
from afr_cli.models.base import Family, Param
from afr_cli.models.dm_soft import DMSoftFamily
from afr_cli.models.estimator import AttentionForestRegressor
from afr_cli.models.larf import LARF, LARF_FAMILIES, LEAVE_SELF_OUT_FAMILIES
from afr_cli.models.plain import ForestFamily
from afr_cli.models.robust import ROBUST_FAMILIES
from afr_cli.models.robust_estimator import RobustRF
from afr_cli.models.satrf import SATRF, satrf_family
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


# Registered families, by the name configs use in `family:`.
FAMILIES: dict[str, Family] = {f.name: f for f in (ForestFamily(), EpsABRFFamily())}
FAMILIES.update(LARF_FAMILIES)  # the ten LARF variants: eps-arf ... em-w-larf
FAMILIES.update(LEAVE_SELF_OUT_FAMILIES)  # em-w-larf-loo, em-larf-loo (an experiment of ours)
FAMILIES.update(
    {f.name: f for f in (satrf_family("y"), satrf_family("x"), satrf_family("yx"), satrf_family("y", heads=2))}
)  # sat-rf-y, -x, -yx, -y2
FAMILIES[DMSoftFamily.name] = DMSoftFamily()  # dm-soft: soft Decision-Machine trees (an extension)
FAMILIES.update({f.name: f for f in (AGBoostFamily(), NonParamFamily())})  # over boosted ensembles
FAMILIES.update({f.name: f for f in ROBUST_FAMILIES.values()})  # robust-rf, robust-rf-train


def get_family(name: str, where: str = "family") -> Family:
    """The registered family called ``name``, or a family of the user's own named ``module:Class``
    (a Family subclass importable by every worker: installed, or on PYTHONPATH); otherwise an
    AfrInputError listing what is allowed."""
    if name in FAMILIES:
        return FAMILIES[name]
    if ":" in name:
        return import_plugin(name, Family, where, "a family", "features, training_problem and predict")
    raise AfrInputError(
        f"{where}: unknown model family {name!r}; allowed: {', '.join(FAMILIES)}, "
        "or module:Class for a family of your own"
    )


__all__ = [
    "AGBoost",
    "AGBoostOnFitted",
    "DecisionMachine",
    "EpsABRF",
    "FAMILIES",
    "Family",
    "LARF",
    "LARF_FAMILIES",
    "Param",
    "RobustRF",
    "SATRF",
    "get_family",
]
