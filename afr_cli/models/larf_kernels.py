"""LARF's feature passes compiled (numba, cached on disk): numpy's own operations in numpy's order.

``larf_leaf`` computed the first level with about ten numpy passes over every (row, tree, leaf
member) entry (a division, a segment maximum, two repeats, a subtraction, a segment sum, a
division, a sparse matrix built, two sparse products, the keys' differences and an einsum), and
``larf.mixture_features`` each head's softmax with five passes over (rows, trees).
These kernels do the same IEEE operations in the same order in two passes each; the
exponentials stay numpy's (on AVX-512 numpy's exp differs from libm's in the last bit), taken
between the two passes:

- ``segment_minima`` and ``segment_logits``: z = (-d) / tau0 minus its line's maximum
  (``np.maximum.reduceat``), which is (-min d) / tau0, the minima taken once for every tau0;
- ``segment_attend``: each line's exponentials divided by their sum as ``np.add.reduceat`` adds
  them (the first entry plus numpy's pairwise sum of the rest), then A = sum_j mu x_j and
  B = sum_j mu y_j from zero, one member after another (scipy's CSR products: ``csr_matvecs``
  and ``csr_matvec``), and ||A - x||^2 as numpy's einsum adds it (``einsum_dot``);
- ``leaf_members`` and ``leaf_sqdist``: each line's training rows, and ||x||^2 + ||x_j||^2 -
  2 x.x_j gathered from numpy's Gram block, then numpy's maximum with 0;
- ``row_minima``, ``row_logits`` and ``softmax_rows``: a head's softmax over trees, z = (-d) / tau
  minus the row maximum, each row divided by its sum as ``z.sum(axis=-1)`` adds it (0 plus
  numpy's pairwise sum of the row); numpy's einsum then sums the weighted values.

Imported only where LARF's features are built (numba's import is not every command's start).
"""

from __future__ import annotations

import numba
import numpy as np

from afr_cli.models.satrf_kernels import _pairwise_sum

# Below UNDERFLOW numpy's exp is exactly +0.0 (it is from -745.1332..., the log of half the
# smallest subnormal; tests/test_larf_fast.py checks it): such a logit is replaced by MARK before
# numpy's exp, since an underflowing result costs its vector exp 5 to 100 times a normal one, and
# its exponential (e^2 > MARKED, while every other logit is <= 0 and its exponential <= 1) is
# read back as 0.
UNDERFLOW = -746.0
MARK = 2.0
MARKED = 2.0


@numba.njit(cache=True, error_model="numpy")
def einsum_dot(a, a0, b, b0, n):  # pragma: no cover
    """sum_k a[a0 + k] b[b0 + k] over k < n as ``np.einsum`` sums one output of "ntm,ntm->nt"
    (its loop for two contiguous operands and a reduced output, built for the
    baseline of numpy's x86-64 wheels: two running sums, lane 0 over even k, lane 1 over odd k,
    blocks of eight taken from their last pair to their first, each product added to its
    lane, then the lanes added and the sum added to the output's 0). tests/test_larf_fast.py
    pins it against np.einsum; a numpy whose einsum adds in another order fails there."""
    lane0 = 0.0
    lane1 = 0.0
    k = 0
    while n - k >= 8:
        for pair in (6, 4, 2, 0):
            lane0 = a[a0 + k + pair] * b[b0 + k + pair] + lane0
            lane1 = a[a0 + k + pair + 1] * b[b0 + k + pair + 1] + lane1
        k += 8
    while k < n:
        lane0 = a[a0 + k] * b[b0 + k] + lane0
        if k + 1 < n:
            lane1 = a[a0 + k + 1] * b[b0 + k + 1] + lane1
        k += 2
    return 0.0 + (lane0 + lane1)


@numba.njit(cache=True, error_model="numpy")
def segment_minima(d, indptr):  # pragma: no cover
    """Each line's smallest d (a NaN if it holds one, as numpy's maximum keeps it), (lines,);
    an empty line gets +inf."""
    lines = len(indptr) - 1
    low = np.full(lines, np.inf)
    for line in range(lines):
        start, stop = indptr[line], indptr[line + 1]
        if stop <= start:
            continue
        v = d[start]
        for e in range(start + 1, stop):
            if not (v <= d[e] or v != v):
                v = d[e]
        low[line] = v
    return low


@numba.njit(cache=True, error_model="numpy")
def segment_logits(d, indptr, low, tau):  # pragma: no cover
    """z = (-d) / tau minus its line's maximum, (nnz,), as ``z = -d / tau; z -= np.repeat(
    np.maximum.reduceat(z, indptr[:-1]), np.diff(indptr))`` gives it, each z whose exponential
    is exactly 0 replaced by ``MARK`` (see ``UNDERFLOW``). ``low``: the lines' minima of d (the
    line's maximum of z is (-low) / tau: x -> (-x) / tau, rounded, never increases)."""
    z = np.empty(len(d))
    for line in range(len(indptr) - 1):
        top = (-low[line]) / tau
        for e in range(indptr[line], indptr[line + 1]):
            v = (-d[e]) / tau - top
            z[e] = MARK if v < UNDERFLOW else v
    return z


@numba.njit(cache=True, error_model="numpy")
def segment_attend(E, indptr, members, X, y, Xq, T):  # pragma: no cover
    """Per line i T + k: the exponentials E of ``segment_logits``'s z (exp(MARK) read as 0,
    written over E), weights mu = E / (their sum as ``np.add.reduceat`` adds it: the first plus
    numpy's pairwise sum of the rest), keys A = mu @ X[members] (lines, m) and values
    B = mu @ y[members] (lines,), each summed from 0 over the members in order (scipy's
    ``csr_matvecs`` / ``csr_matvec``), and ||A - Xq[i]||^2 (lines,) as ``np.einsum("ntm,ntm->nt",
    diff, diff)`` sums the differences ``keys - Xq[:, None, :]``."""
    lines, m = len(indptr) - 1, X.shape[1]
    keys = np.zeros((lines, m))
    values = np.zeros(lines)
    key_sqdist = np.zeros(lines)
    acc = np.empty(m)
    diff = np.empty(m)
    for e in range(len(E)):
        E[e] = 0.0 if E[e] > MARKED else E[e]
    for line in range(lines):
        start, stop = indptr[line], indptr[line + 1]
        if stop <= start:
            continue
        total = E[start]
        if stop - start > 1:
            total = total + _pairwise_sum(E, start + 1, stop - start - 1)
        acc[:] = 0.0
        value = 0.0
        for e in range(start, stop):
            w = E[e] / total
            j = members[e]
            value += w * y[j]
            for f in range(m):
                acc[f] += w * X[j, f]
        values[line] = value
        i = line // T
        for f in range(m):
            keys[line, f] = acc[f]
            diff[f] = acc[f] - Xq[i, f]
        key_sqdist[line] = einsum_dot(diff, 0, diff, 0, m)
    return keys, values, key_sqdist


@numba.njit(cache=True, error_model="numpy")
def leaf_members(leaves, lengths, member_ptr, member_rows, indptr):  # pragma: no cover
    """The training rows of each line's leaf (the CSR membership's row of that leaf, in order)."""
    members = np.empty(indptr[-1], dtype=member_rows.dtype)
    for line in range(len(leaves)):
        source = member_ptr[leaves[line]]
        start = indptr[line]
        for k in range(lengths[line]):
            members[start + k] = member_rows[source + k]
    return members


@numba.njit(cache=True, error_model="numpy")
def leaf_sqdist(gram, first_row, T, indptr, members, query_sq, train_sq, out):  # pragma: no cover
    """Writes max(query_sq[i] + train_sq[j] - 2 gram[i - first_row, j], 0) into ``out`` for every
    entry of the rows i = first_row, ... that ``gram`` (their x.x_j) covers, line i T + k: the
    addition, the product by 2 and the subtraction in numpy's order, then numpy's maximum with 0
    (a NaN kept)."""
    for line in range(first_row * T, (first_row + gram.shape[0]) * T):
        i = line // T
        row = i - first_row
        for e in range(indptr[line], indptr[line + 1]):
            j = members[e]
            v = (query_sq[i] + train_sq[j]) - 2.0 * gram[row, j]
            if not (v >= 0.0 or v != v):
                v = 0.0
            out[e] = v


@numba.njit(cache=True, error_model="numpy")
def row_minima(d):  # pragma: no cover
    """Each row's smallest d (a NaN if it holds one, as numpy's maximum keeps it), (n,)."""
    n, T = d.shape
    low = np.empty(n)
    for i in range(n):
        v = d[i, 0]
        for k in range(1, T):
            if not (v <= d[i, k] or v != v):
                v = d[i, k]
        low[i] = v
    return low


@numba.njit(cache=True, error_model="numpy")
def row_logits(d, low, tau):  # pragma: no cover
    """z = (-d) / tau minus its row maximum (-low) / tau, (n, T), as ``softmax_neg`` starts, each
    z whose exponential is exactly 0 replaced by ``MARK``."""
    n, T = d.shape
    z = np.empty((n, T))
    for i in range(n):
        top = (-low[i]) / tau
        for k in range(T):
            v = (-d[i, k]) / tau - top
            z[i, k] = MARK if v < UNDERFLOW else v
    return z


@numba.njit(cache=True, error_model="numpy")
def softmax_rows(E):  # pragma: no cover
    """The exponentials E (n, T) of ``row_logits``'s z (exp(MARK) read as 0), each row divided
    by its sum, in place: ``E /= E.sum(axis=-1, keepdims=True)`` bit for bit (0 plus numpy's
    pairwise sum of the row)."""
    n, T = E.shape
    flat = E.reshape(n * T)
    for e in range(n * T):
        flat[e] = 0.0 if flat[e] > MARKED else flat[e]
    for i in range(n):
        start = i * T
        total = 0.0 + _pairwise_sum(flat, start, T)
        for k in range(T):
            flat[start + k] = flat[start + k] / total
    return E
