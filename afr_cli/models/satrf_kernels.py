"""SAT-RF-y's self-attention step per row, compiled (numba, cached on disk): no exp inside.

For the y variant the dissimilarity (y_i - y_k)^2 is exactly symmetric, so its exponentials are
taken once per pair, by numpy (``satrf.symmetric_exponentials``: on AVX-512 numpy's exp differs
from libm's in the last bit). This kernel then does what ``self_attention`` and ``attend`` do with
the full (rows, T, T) tensor, in the same order: each line's sum over k from k = 0 one term after
another (numpy's reduction over an axis that is not the innermost in memory, as in the
dissimilarity tensors of column-ordered leaf values), each weight divided by its line's sum, and
the attended value summed from zero over k = 0, 1, ... as ``attend``'s column loop does. Imported
only where SAT-RF-y features are built (numba's import is not every command's start).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def pair_scores(values, neg_kappa):  # pragma: no cover
    """(y_i - y_k)^2 / -kappa for every pair i < k of every row, (n, T(T-1)/2), row-major pairs:
    numpy's subtraction, square (a product) and division, one IEEE operation each."""
    n, T = values.shape
    out = np.empty((n, T * (T - 1) // 2))
    for r in range(n):
        p = 0
        for i in range(T):
            for k in range(i + 1, T):
                d = values[r, i] - values[r, k]
                out[r, p] = (d * d) / neg_kappa
                p += 1
    return out


@numba.njit(cache=True)
def attend_symmetric(E, z):  # pragma: no cover
    """Per row n: softmax weights a_ik = e_ik / sum_k e_ik from the pair exponentials E (n, T(T-1)/2,
    pairs i < k in row-major order; e_ii = exp(-0) = 1), and out_i = sum_k a_ik z_k, (n, T)."""
    n, T = z.shape
    out = np.empty((n, T))
    full = np.empty((T, T))
    for r in range(n):
        p = 0
        for i in range(T):
            full[i, i] = 1.0
            for k in range(i + 1, T):
                full[i, k] = E[r, p]
                full[k, i] = E[r, p]
                p += 1
        for i in range(T):
            total = full[i, 0]
            for k in range(1, T):
                total += full[i, k]
            acc = 0.0
            for k in range(T):
                weight = full[i, k] / total
                acc += weight * z[r, k]
            out[r, i] = acc
    return out
