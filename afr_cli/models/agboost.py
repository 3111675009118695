"""AGBoost (Konstantinov, Utkin, Kirpichenko 2022): attention over the iterations of a GBM.

With the GBM's h0, T iterations and B_t(x) = T * lr * h_t(x) (the rescaled tree, eq 11),
A_t(x) = mean training x in x's leaf of tree t (eq 11) and

    alpha_t(x) = (1 - eps) softmax_t(-0.5 ||x - A_t(x)||^2 delta^t) + eps w_t,   t = 1..T  (eq 19)
    G(x) = h0 + sum_t alpha_t(x) B_t(x)                                                 (eq 14)

(the minus signs missing from the printed eqs 19 and 22 are typos: attention falls with
distance). Training is the QP of eq 20, linear in w on the simplex:
r = h0 + (1 - eps) sum_t D_t B_t, Phi = eps B. delta (the discount) is a design parameter, eps a
mixing one. alpha = 1/T gives back the GBM; at eps = 1 delta has no effect; as delta -> 0 the
softmax becomes uniform and the untrained model tends to the GBM. "Non-param" (``nonparam``)
is the same model with w = 1/T, untrained.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from afr_cli.ensembles import BOOSTED
from afr_cli.ensembles.leaf_statistics import RowTensors, softmax_neg
from afr_cli.models.abrf import EpsABRFFamily, SoftmaxFeatures
from afr_cli.models.base import DESIGN, EPS, Param
from afr_cli.solvers.solve import LinearAttentionProblem

DELTA = Param("delta", DESIGN, 0.9, 0.0, 1.0, doc="discount: iteration t's distance is scaled by delta^t")
LEARNERS = ("dt", "ert")


def discounted_attention(rows: RowTensors, delta: float) -> np.ndarray:
    """softmax_t(-0.5 ||x - A_t(x)||^2 delta^t), t = 1..T, (n, T), cached on the rows per delta."""

    def build() -> np.ndarray:
        discount = float(delta) ** np.arange(1, rows.leaves.shape[1] + 1)
        return softmax_neg(0.5 * rows.key_sqdist * discount, 1.0)

    return rows.memo(("agboost", "attention", float(delta)), build)


@dataclass(frozen=True)
class BoostedFeatures:
    """eps-ABRF's softmax features over the GBM's values, the GBM's intercept h0, and the
    discounted softmax attention D (n, T) itself (for ``afr plot weights``)."""

    softmax: SoftmaxFeatures
    intercept: float
    attention: np.ndarray


class AGBoostFamily(EpsABRFFamily):
    """eps-ABRF's contamination over a boosted ensemble, with the discounted softmax and h0."""

    name = "agboost"
    summary = "attention over GBM iterations with eps-contamination and discount delta (AGBoost paper)"
    params = (EPS, DELTA)
    structures = (BOOSTED,)

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> BoostedFeatures:
        def build() -> BoostedFeatures:
            attention = discounted_attention(rows, design["delta"])
            return BoostedFeatures(
                SoftmaxFeatures(rows.values, np.einsum("nt,nt->n", attention, rows.values)),
                rows.stats.intercept,
                attention,
            )

        return rows.memo(("agboost", "features", float(design["delta"])), build)

    def training_problem(
        self, feats: BoostedFeatures, y: np.ndarray, mixing: Mapping[str, float]
    ) -> LinearAttentionProblem | None:
        problem = super().training_problem(feats.softmax, y, mixing)
        return None if problem is None else replace(problem, r=problem.r + feats.intercept)

    def predict(self, feats: BoostedFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        return feats.intercept + super().predict(feats.softmax, mixing, theta)

    def fitted_attributes(self, feats: BoostedFeatures, mixing, theta):
        return super().fitted_attributes(feats.softmax, mixing, theta)

    def softmax_attention(self, feats: BoostedFeatures) -> np.ndarray:
        """The untrained attention over the iterations, D_t(x), (n, T)."""
        return feats.attention


class NonParamFamily(AGBoostFamily):
    """AGBoost with w = 1/T, untrained (the paper's "Non-param" column)."""

    name = "nonparam"
    summary = "AGBoost with w fixed at 1/T (untrained; the AGBoost paper's Non-param)"

    def training_problem(self, feats, y, mixing) -> None:
        return None
