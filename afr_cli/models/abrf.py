"""eps-ABRF (LARF paper's w-ARF): softmax tree attention contaminated by trained weights w.

alpha_k(x) = (1 - eps) softmax_k(-||x - A_k(x)||^2 / tau) + eps w_k,  yhat = sum_k alpha_k B_k(x).
Training is linear in w:  r = (1 - eps) sum_k s_k B_k,  Phi = eps B,  w on the simplex.
eps = 0 is the tables' "Softmax" model (w unused); eps = 1 a statically weighted forest.

``reading`` "code": the authors' public code (andruekonst/attention-forest) computes the tree
attention as softmax(-tau ||x - A_k(x)||^2 / 2), tau multiplying, so the grid's tau is the
text's temperature 2 / tau; nothing else differs (docs/models.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from afr_cli.ensembles.leaf_statistics import RowTensors, softmax_neg
from afr_cli.models.base import CODE, EPS, TAU, TEXT, CodeDifference, Family, reading_param, uniform
from afr_cli.solvers.solve import LinearAttentionProblem, simplex_constraints


@dataclass(frozen=True)
class SoftmaxFeatures:
    """Per row set: tree values B (n, T) and their softmax-weighted sum (n,)."""

    values: np.ndarray
    softmax_sum: np.ndarray


def softmax_features(rows: RowTensors, tau: float) -> SoftmaxFeatures:
    """The softmax tree attention of every row, cached on the rows per tau."""

    def build() -> SoftmaxFeatures:
        s = softmax_neg(rows.key_sqdist, tau)
        return SoftmaxFeatures(rows.values, np.einsum("nt,nt->n", s, rows.values))

    return rows.memo(("softmax", float(tau)), build)


READING = reading_param("tree softmax(-tau d / 2), tau multiplying")


def code_temperature(tau: float) -> float:
    """The text's temperature the authors' code computes for the grid value tau: its attention is
    softmax(-tau d / 2) = softmax(-d / (2 / tau))."""
    return 2.0 / float(tau)


class EpsABRFFamily(Family):
    """eps-ABRF: (1 - eps) softmax(-||x - A_k(x)||^2 / tau) + eps w over the trees, w on the simplex."""

    name = "eps-abrf"
    summary = "attention-based RF with Huber eps-contamination (SAT-RF paper sec. 5; = w-ARF)"
    params = (EPS, TAU, READING)
    code_source = "andruekonst/attention-forest@3c20f60"
    code_differences = (
        CodeDifference(
            "tree attention",
            "softmax(-||x - A_k(x)||^2 / tau)",
            "softmax(-0.5 tau ||x - A_k(x)||^2): tau multiplies, so the text's temperature is 2 / tau",
            "attention_forest/model.py:293, 298",
        ),
    )

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> SoftmaxFeatures:
        """The softmax tree attention of the rows at temperature tau, or 2 / tau under the code
        reading (cached on the rows)."""
        tau = design["tau"]
        return softmax_features(rows, code_temperature(tau) if design.get("reading", TEXT) == CODE else tau)

    def training_problem(
        self, feats: SoftmaxFeatures, y: np.ndarray, mixing: Mapping[str, float]
    ) -> LinearAttentionProblem | None:
        """y ~ (1 - eps) softmax sum + eps B w, w on the simplex; None at eps = 0 (nothing to train)."""
        eps = mixing["eps"]
        if eps == 0.0:
            return None
        T = feats.values.shape[1]
        return LinearAttentionProblem(y, (1.0 - eps) * feats.softmax_sum, eps * feats.values, simplex_constraints(T))

    def predict(self, feats: SoftmaxFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        """(1 - eps) softmax sum + eps B w, with w = theta (uniform when untrained)."""
        eps = mixing["eps"]
        w = self.weights(feats, theta)
        return (1.0 - eps) * feats.softmax_sum + eps * (feats.values @ w)

    def weights(self, feats: SoftmaxFeatures, theta: np.ndarray | None) -> np.ndarray:
        """The tree weights w: theta, or 1/T when nothing was trained."""
        return uniform(feats.values.shape[1]) if theta is None else theta

    def fitted_attributes(self, feats, mixing, theta):
        """``w_``, the tree weights, for the scikit-learn estimator."""
        return {"w_": self.weights(feats, theta)}
