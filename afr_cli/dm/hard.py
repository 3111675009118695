"""The hard machine (eqs 2-5): tests h = sgn(S x - t), scores p = Bbar h, exit leaves where p = 1.

scikit-learn compares ``float32(x)`` with float64 thresholds, so X is cast to float32 first
(and each threshold rounded down to float32, which gives the same comparison exactly); computed
in float64 directly, points within ~3e-8 of a threshold would take the other branch. ``B h`` is an integer vector
(exact in float32 up to depth 2^24); leaf i is the
exit leaf iff ``B_i h == ||B_i||^2`` (p_i = 1, Theorem 2), so no division is rounded on the way.
Rows are processed in chunks so that memory stays bounded for any n.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

CHUNK_ENTRIES = 4_000_000  # rows per chunk * (internal nodes + leaves) kept below this


def as_tested(X: np.ndarray) -> np.ndarray:
    """X as the trees see it: rounded to float32, held in float64 (scikit-learn's comparison)."""
    return np.asarray(X, dtype=np.float32).astype(np.float64)


def chunks(n: int, width: int) -> Iterator[slice]:
    """Row slices whose dense intermediates stay below CHUNK_ENTRIES entries."""
    size = max(1, CHUNK_ENTRIES // max(width, 1))
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def margins(X: np.ndarray, features: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """S x - t for every row (n, L-1); S has one 1 per row, so S x is the column gather x[:, features]."""
    return X[:, features] - thresholds


def float32_floor(t: np.ndarray) -> np.ndarray:
    """The largest float32 <= t, elementwise: for float32 x, ``x <= t`` iff ``x <= float32_floor(t)``,
    so the tests can run in float32 (half the memory traffic) with scikit-learn's exact outcome."""
    t32 = np.asarray(t, dtype=np.float64).astype(np.float32)
    above = t32.astype(np.float64) > t
    t32[above] = np.nextafter(t32[above], np.float32(-np.inf))
    return t32


def template_products(Bf: sp.csr_matrix, X32: np.ndarray, features: np.ndarray, t32: np.ndarray) -> np.ndarray:
    """B h for each row of float32 X, (L, n), with h = sgn(S x - t) (-1 for x_f <= t, +1 otherwise)."""
    H = np.greater(X32[:, features], t32).astype(np.float32)
    H *= 2
    H -= 1
    return np.asarray(Bf @ H.T)


def exit_leaves(Bh: np.ndarray, norms: np.ndarray, n_trees: int) -> np.ndarray:
    """(n, T) indices of the leaves with p = 1, in increasing leaf order (one per tree: Theorem 2)."""
    rows, leaves = np.nonzero((Bh == norms[:, None]).T)
    if len(rows) != Bh.shape[1] * n_trees:
        raise RuntimeError("a row did not reach exactly one leaf per tree (Theorem 2 violated)")
    return leaves.reshape(Bh.shape[1], n_trees)
