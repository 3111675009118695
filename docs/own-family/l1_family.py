"""eps-ABRF with the L1 distance: attention softmax(-||x - A_k(x)||_1 / tau) over the trees."""

import numpy as np

from afr_cli.family_api import (
    EPS,
    TAU,
    Family,
    LinearAttentionProblem,
    SoftmaxFeatures,
    simplex_constraints,
    softmax_neg,
    uniform,
)


class L1ABRF(Family):
    """eps-ABRF whose softmax weighs each tree by the L1 distance of x to its leaf's key A_k(x)."""

    name = "l1-abrf"
    summary = "eps-ABRF with L1 distances to the leaf keys"
    params = (EPS, TAU)  # eps: mixing (rescales), tau: design (changes the features)

    def features(self, rows, design):
        """B (n, T) and the softmax-weighted sum of B, cached on the rows per tau."""
        tau = design["tau"]

        def build():
            l1 = np.abs(rows.keys - rows.X[:, None, :]).sum(axis=2)  # (n, T)
            attention = softmax_neg(l1, tau)
            return SoftmaxFeatures(rows.values, np.einsum("nt,nt->n", attention, rows.values))

        return rows.memo(("l1-softmax", tau), build)

    def training_problem(self, feats, y, mixing):
        """y ~ (1 - eps) softmax sum + eps B w, w on the simplex; nothing to train at eps = 0."""
        eps = mixing["eps"]
        if eps == 0.0:
            return None
        trees = feats.values.shape[1]
        return LinearAttentionProblem(y, (1 - eps) * feats.softmax_sum, eps * feats.values, simplex_constraints(trees))

    def predict(self, feats, mixing, theta):
        """(1 - eps) softmax sum + eps B w, with w uniform when untrained."""
        eps = mixing["eps"]
        w = uniform(feats.values.shape[1]) if theta is None else theta
        return (1 - eps) * feats.softmax_sum + eps * (feats.values @ w)
