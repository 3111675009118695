"""The soft machine (eqs 12-13): M_ij = sigmoid(B_ij (x_{f_j} - t_j) / tau) where B_ij != 0, else 1;
p_i = prod_j M_ij.

Each internal node sends sigmoid(-(x-t)/tau) of the mass left and sigmoid((x-t)/tau) right, so
the p_i of one tree sum to 1 for every tau, and tend to the hard tree's exit leaf as tau -> 0
(except for a point exactly on a threshold, which the sigmoid splits half and half for every tau
where the hard tree sends it left). Computed in log space: log p = B+ log sigmoid(z/tau) +
B- log sigmoid(-z/tau), with B+ / B- the 0/1 patterns of B's +1 / -1 entries; p underflows to 0
far from the exit leaf, never to NaN.

Eq 11 (``softmax(K (S x - t) / tau)``, K undefined) is not used: with K = B it does not reduce to
the tree (on the paper's worked example B q = (3, 4, -2, -4, 2, 0) picks v2, not v5).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def log_sigmoid(u: np.ndarray) -> np.ndarray:
    """log(1 / (1 + exp(-u))) = min(u, 0) - log1p(exp(-|u|)): stable for any u, and about twice as
    fast as -logaddexp(0, -u) (one exp and one log1p, computed in place)."""
    tail = np.abs(u)
    np.negative(tail, out=tail)
    np.exp(tail, out=tail)
    np.log1p(tail, out=tail)
    out = np.minimum(u, 0.0)
    out -= tail
    return out


def leaf_probabilities(Bplus: sp.csr_matrix, Bminus: sp.csr_matrix, Z: np.ndarray, tau: float) -> np.ndarray:
    """p (L, n) of each leaf for margins Z = S x - t (n, L-1) at temperature tau."""
    U = Z / tau
    right = log_sigmoid(U)  # log sigmoid(u): the share sent right
    left = right - U  # log sigmoid(-u) = log sigmoid(u) - u: one logarithm per (row, node)
    return np.exp(np.asarray(Bplus @ right.T) + np.asarray(Bminus @ left.T))
