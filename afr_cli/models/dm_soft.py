"""dm-soft (an extension of ours, no paper table): a weighted forest of soft trees.

The tree weights alpha_k are trained but do not depend on x, so this is not attention (eps-ABRF
attends: its weights are a softmax over each x's leaf distances); it is a weighted forest.

Each tree is replaced by its soft Decision Machine (eqs 12-13 at temperature tau), evaluated with
the leaf values the ensemble itself predicts with (scikit-learn's tree values: for RF the leaf
means of each tree's bootstrap sample, not the all-rows leaf means B_k(x) of eps-ABRF), so that
    yhat(x) = intercept + sum_k alpha_k c_k(x),   alpha_k = (1 - eps)/T + eps w_k,  w on the simplex,
with c_k(x) = T * weight_k * (soft tree k)(x): for a forest (weights 1/T, no intercept) c_k is
tree k's soft prediction. At eps = 0 and tau -> 0 this is the ensemble's own prediction.
Training is linear in w: r = intercept + (1 - eps) mean_k c_k, Phi = eps c.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from afr_cli.dm import DecisionMachine, ensemble_parts
from afr_cli.dm.walk import WalkedForest, tree_predictions, walkable
from afr_cli.ensembles import AVERAGE, BOOSTED
from afr_cli.ensembles.leaf_statistics import RowTensors
from afr_cli.models.base import DESIGN, EPS, Family, Param, uniform
from afr_cli.solvers.solve import LinearAttentionProblem, simplex_constraints

SOFT_TAU = Param(
    "tau",
    DESIGN,
    0.1,
    0.0,
    None,
    low_open=True,
    doc="soft-tree temperature: each split sends sigmoid(+-(x_f - t)/tau) of the mass left/right",
)

# One machine (or walked forest) per fitted ensemble, shared by its training and query row sets
# (keyed on the fold's leaf statistics, which live exactly as long as the fold).
_MACHINES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_WALKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class SoftTreeFeatures:
    """Per row set and tau: c (n, T), each tree's scaled soft prediction, and the intercept."""

    trees: np.ndarray
    intercept: float

    @property
    def mean(self) -> np.ndarray:
        return self.trees.mean(axis=1)


def ensemble_machine(rows: RowTensors) -> DecisionMachine:
    """The fold's ensemble as one DecisionMachine whose tree k has values T * weight_k * tree values."""
    stats = rows.stats
    if stats not in _MACHINES:
        fitted = stats.ensemble  # the registry's FittedEnsemble: trees, tree_weights, intercept
        parts = ensemble_parts(fitted)
        T = len(parts.trees)
        scale = np.ones(T) if parts.average else T * parts.weights
        _MACHINES[stats] = DecisionMachine.from_ensemble(fitted, weights=scale)
    return _MACHINES[stats]


def walked_ensemble(rows: RowTensors) -> tuple[WalkedForest | None, float]:
    """The fold's scikit-learn trees as one WalkedForest with values times T * weight_k (None when a
    tree is not one ``dm.walk`` can walk), and the ensemble's intercept."""
    stats = rows.stats
    if stats not in _WALKED:
        parts = ensemble_parts(stats.ensemble)
        T = len(parts.trees)
        scale = np.ones(T) if parts.average else T * parts.weights
        _WALKED[stats] = (walkable(parts.trees, scale), float(parts.intercept))
    return _WALKED[stats]


def soft_tree_features(rows: RowTensors, tau: float) -> SoftTreeFeatures:
    """Every tree's soft prediction at every row, cached on the rows per tau: scikit-learn's trees
    walked by the compiled kernel (``dm.walk``: no DecisionMachine built, the same bits), any other
    tree through the machine's matrices."""

    def build() -> SoftTreeFeatures:
        forest, intercept = walked_ensemble(rows)
        if forest is not None:
            return SoftTreeFeatures(tree_predictions(forest, rows.X, tau), intercept)
        machine = ensemble_machine(rows)
        return SoftTreeFeatures(machine.tree_predictions_soft(rows.X, tau), machine.intercept)

    return rows.memo(("dm-soft", float(tau)), build)


class DMSoftFamily(Family):
    name = "dm-soft"
    summary = (
        "a weighted forest of soft Decision-Machine trees (eqs 12-13): trained tree weights, not depending on x, "
        "eps-mixed with 1/T (an extension; not attention)"
    )
    params = (EPS, SOFT_TAU)
    structures = (AVERAGE, BOOSTED)  # c_k = T w_k tree_k: uniform attention gives back either kind
    # Phi = eps x the soft trees at tau: each grid point (eps, tau) and stage its own, 0 repeats
    # measured, so the solve memo does not key them.
    repeats_problems = False

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> SoftTreeFeatures:
        return soft_tree_features(rows, design["tau"])

    def training_problem(
        self, feats: SoftTreeFeatures, y: np.ndarray, mixing: Mapping[str, float]
    ) -> LinearAttentionProblem | None:
        eps = mixing["eps"]
        if eps == 0.0:
            return None
        T = feats.trees.shape[1]
        return LinearAttentionProblem(
            y, feats.intercept + (1.0 - eps) * feats.mean, eps * feats.trees, simplex_constraints(T)
        )

    def predict(self, feats: SoftTreeFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        eps = mixing["eps"]
        return feats.intercept + (1.0 - eps) * feats.mean + eps * (feats.trees @ self.weights(feats, theta))

    def weights(self, feats: SoftTreeFeatures, theta: np.ndarray | None) -> np.ndarray:
        return uniform(feats.trees.shape[1]) if theta is None else theta

    def fitted_attributes(self, feats, mixing, theta):
        return {"w_": self.weights(feats, theta)}
