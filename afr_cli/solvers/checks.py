"""Acceptance checks of a fast solver's answer: feasibility and the QP's KKT residual.

The fast path's answer is kept only when, after ``LinearConstraints.cleaned``, it violates no
constraint by more than FEASIBILITY_TOL and (for QPs) its KKT residual, computed here from the
problem data alone, is below KKT_TOL relative to the gradient's scale. Otherwise the solve falls
back to the cvxpy chain and the fallback is recorded.
"""

from __future__ import annotations

import numpy as np

from afr_cli.solvers.problems import LinearConstraints

FEASIBILITY_TOL = 1e-8
KKT_TOL = 1e-7
_ACTIVE_TOL = 1e-6


def kkt_residual(H: np.ndarray, f: np.ndarray, cons: LinearConstraints, theta: np.ndarray) -> float:
    """KKT residual of min 1/2 t'Ht + f't at a feasible theta, as the projected-gradient step.

    With g = H theta + f + A'mu (mu fitted by least squares on the coordinates away from their
    bounds), theta is optimal iff theta = clip(theta - g / s, lower, upper), s = max(1, |H theta|,
    |f|) the gradient's scale; the largest |difference| is returned. The measure is continuous
    (a weight 1e-10 above its bound is neither free nor active by fiat)."""
    g = H @ theta  # once: the scale and the gradient read the same product
    scale = max(1.0, np.max(np.abs(g), initial=0.0), np.max(np.abs(f), initial=0.0))
    g += f
    g /= scale
    room = np.minimum(theta - cons.lower, cons.upper - theta)
    free = room > _ACTIVE_TOL * np.maximum(1.0, np.abs(theta))
    if len(cons.eq_rhs) and free.any():
        mu = np.linalg.lstsq(cons.eq_matrix[:, free].T, -g[free], rcond=None)[0]
        g = g + cons.eq_matrix.T @ mu
    return float(np.max(np.abs(theta - np.clip(theta - g, cons.lower, cons.upper)), initial=0.0))
