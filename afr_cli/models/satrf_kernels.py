"""SAT-RF's self-attention steps per row, compiled (numba, cached on disk): no exp inside.

For the y variant the dissimilarity (y_i - y_k)^2 is exactly symmetric, so its exponentials are
taken once per pair, by numpy (``satrf.symmetric_exponentials``: on AVX-512 numpy's exp differs
from libm's in the last bit). This kernel then does what ``self_attention`` and ``attend`` do with
the full (rows, T, T) tensor, in the same order: each line's sum over k from k = 0 one term after
another (numpy's reduction over an axis that is not the innermost in memory, as in the
dissimilarity tensors of column-ordered leaf values), each weight divided by its line's sum, and
the attended value summed from zero over k = 0, 1, ... as ``attend``'s column loop does.

For x and yx (``satrf.chain_block_fused``) numpy keeps the Gram stack, the key norms and the
exponentials; ``dissimilarity_from_gram`` does ``pair_dissimilarity``'s elementwise passes in one,
``normalize_lines`` divides each line of x's C-ordered tensor by numpy's pairwise sum of it, and
``attend_lines`` is yx's sums and attend (rows innermost, as for y) on the full tensor. Imported
only where SAT-RF features are built (numba's import is not every command's start).
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


@numba.njit(cache=True)
def dissimilarity_from_gram(G, sq, values, yx):  # pragma: no cover
    """``pair_dissimilarity``'s x (``yx`` False) or yx tensor, written over G, the stack of Gram
    matrices A A' (n, T, T, from numpy's matmul) with sq the squared key norms (n, T): per entry
    the same IEEE operations in the same order as its numpy passes: (G * -2) + (sq_i + sq_k), then
    numpy's maximum with 0 (a NaN kept), the diagonal 0; for yx numpy's maximum with the floor
    (sq_i + sq_k + 1) * 1e-12 and (y_i - y_k)^2 divided by it."""
    n, T, _ = G.shape
    for r in range(n):
        for i in range(T):
            for k in range(T):
                norms = sq[r, i] + sq[r, k]
                d = G[r, i, k] * -2.0
                d = d + norms
                if not (d >= 0.0 or d != d):  # numpy's maximum(d, 0): d unless 0 is larger
                    d = 0.0
                if i == k:
                    d = 0.0
                if yx:
                    floor = (norms + 1.0) * 1e-12
                    if not (d >= floor or d != d):
                        d = floor
                    num = values[r, i] - values[r, k]
                    d = (num * num) / d
                G[r, i, k] = d
    return G


@numba.njit(cache=True)
def _pairwise_sum(a, start, n):  # pragma: no cover
    """numpy's pairwise sum of a[start:start + n] (a contiguous run): below 8 terms one after
    another; up to 128, eight running sums combined as ((0+1)+(2+3))+((4+5)+(6+7)), then the rest
    one by one; above, the two halves (the first a multiple of 8 long) summed apart and added."""
    if n < 8:
        res = -0.0
        for j in range(n):
            res += a[start + j]
        return res
    if n <= 128:
        r0 = a[start]
        r1 = a[start + 1]
        r2 = a[start + 2]
        r3 = a[start + 3]
        r4 = a[start + 4]
        r5 = a[start + 5]
        r6 = a[start + 6]
        r7 = a[start + 7]
        j = 8
        while j < n - (n % 8):
            r0 += a[start + j]
            r1 += a[start + j + 1]
            r2 += a[start + j + 2]
            r3 += a[start + j + 3]
            r4 += a[start + j + 4]
            r5 += a[start + j + 5]
            r6 += a[start + j + 6]
            r7 += a[start + j + 7]
            j += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while j < n:
            res += a[start + j]
            j += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a, start, half) + _pairwise_sum(a, start + half, n - half)


@numba.njit(cache=True)
def normalize_lines(E):  # pragma: no cover
    """Each line of the C-ordered exponentials E (n, T, T) divided by its sum over k, in place:
    ``E /= E.sum(axis=2, keepdims=True)`` bit for bit (numpy adds a contiguous line pairwise, onto
    its reduction's identity 0)."""
    n, T, _ = E.shape
    flat = E.reshape(n * T * T)
    for line in range(n * T):
        start = line * T
        total = 0.0 + _pairwise_sum(flat, start, T)
        for k in range(T):
            flat[start + k] = flat[start + k] / total
    return E


@numba.njit(cache=True)
def attend_lines(E, z):  # pragma: no cover
    """Per row n: a_ik = e_ik / sum_k e_ik from the exponentials E (n, T, T, any layout) and
    out_i = sum_k a_ik z_k, (n, T): each line summed over k = 0, 1, ... one term after another (numpy's
    reduction over an axis that is not innermost in memory), and the attended value from zero over
    k as ``attend``'s column loop adds it."""
    n, T = z.shape
    out = np.empty((n, T))
    for r in range(n):
        for i in range(T):
            total = E[r, i, 0]
            for k in range(1, T):
                total += E[r, i, k]
            acc = 0.0
            for k in range(T):
                acc += (E[r, i, k] / total) * z[r, k]
            out[r, i] = acc
    return out
