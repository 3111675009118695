"""The compiled loops of ``dm.walk`` (numba, cached on disk): additions and comparisons only.

Kept apart from ``walk`` so that numba is imported, and its cache read, only by a process that
walks a forest: importing afr (``afr --help``, every command's start) never pays for it. The
first call in a fresh checkout compiles the kernels and writes them to numba's cache
(``__pycache__``); later processes load them from there.
"""

from __future__ import annotations

import numba
import numpy as np

PRUNE_BELOW = -746.0  # exp(x) == 0.0 exactly for every x below about -745.13 (smallest subnormal / 2)


@numba.njit(cache=True)
def preorder(left, right):  # pragma: no cover
    """Whether the nodes of one tree are numbered in depth-first preorder, left child first (then
    a parent comes before its children and a tree's leaves are met in increasing id)."""
    n = len(left)
    stack = np.empty(n + 1, np.int64)
    stack[0] = 0
    top, expected = 1, 0
    while top > 0:
        top -= 1
        node = stack[top]
        if node != expected:
            return False
        expected += 1
        if left[node] != -1:
            stack[top] = right[node]
            stack[top + 1] = left[node]
            top += 2
    return expected == n


@numba.njit(cache=True)
def leaf_log_p(U, R, column, left, right, tree_start, leaf_of, n_leaves, max_nodes, block):  # pragma: no cover
    """log p (L, n) of every leaf at every row from u = (S x - t) / tau and R = log sigmoid(u),
    both (internal nodes, n), and where it is below PRUNE_BELOW (``dead``; log p then stored as 0,
    an exponential numpy takes at full speed).

    Each tree's nodes are visited in id order (preorder: a parent before its children), for
    ``block`` rows at a time, each node carrying its path's two sums: log p of a leaf = (0 + the
    right turns' log sigmoid(u), in path order) + (0 + the left turns' log sigmoid(-u) =
    log sigmoid(u) - u, in path order), the two sparse products' sums, term for term."""
    n = U.shape[1]
    log_p = np.empty((n_leaves, n))
    dead = np.empty((n_leaves, n), np.bool_)
    plus = np.zeros((max_nodes, block))  # a root's sums stay 0: no node writes them
    minus = np.zeros((max_nodes, block))
    for b0 in range(0, n, block):
        w = min(n, b0 + block) - b0
        for k in range(len(tree_start) - 1):
            first = tree_start[k]
            for i in range(first, tree_start[k + 1]):
                own = i - first
                c = column[i]
                if c < 0:
                    j = leaf_of[i]
                    for r in range(w):
                        total = plus[own, r] + minus[own, r]
                        low = total < PRUNE_BELOW
                        dead[j, b0 + r] = low
                        log_p[j, b0 + r] = 0.0 if low else total
                else:
                    lo = left[i] - first
                    hi = right[i] - first
                    for r in range(w):
                        share = R[c, b0 + r]
                        p_sum = plus[own, r]
                        m_sum = minus[own, r]
                        plus[lo, r] = p_sum
                        minus[lo, r] = m_sum + (share - U[c, b0 + r])
                        plus[hi, r] = p_sum + share
                        minus[hi, r] = m_sum
    return log_p, dead


@numba.njit(cache=True)
def sum_by_tree(p, dead, value, tree_of_leaf, out):  # pragma: no cover
    """out[k, r] += p * v over tree k's leaves in increasing id, for every row r, leaving out the
    dead ones (their p * v is a signed zero, which adds nothing to a sum that starts at +0): the
    sparse product's sum over each tree's leaves."""
    for j in range(p.shape[0]):
        k = tree_of_leaf[j]
        v = value[j]
        for r in range(p.shape[1]):
            if not dead[j, r]:
                out[k, r] += p[j, r] * v


@numba.njit(cache=True)
def count_at_least(u, bound):  # pragma: no cover
    """How many entries of u have |u| >= bound."""
    flat = u.reshape(u.size)
    count = 0
    for i in range(flat.size):
        count += abs(flat[i]) >= bound
    return count


@numba.njit(cache=True)
def split_tails(u, fast_below, zero_from, exact_below):  # pragma: no cover
    """-|u| of the entries whose log sigmoid needs an exponential, gathered into one array: those
    with |u| < fast_below from the front (``vals[:f]``), those with fast_below <= |u| < zero_from
    from the back (``vals[b:]``), and their flat indices into u (``idx``), as (vals, idx, f, b).
    Left out: |u| >= zero_from (exp(-|u|) is exactly 0) and u <= -exact_below (log1p(exp(u)) is
    below half an ulp of u): there log sigmoid(u) is min(u, 0) exactly. Negation and absolute value
    are exact."""
    flat = u.reshape(u.size)
    n = flat.size
    # Without branches (which half the entries would mispredict): every entry is written to the
    # front's next slot and the back's next slot, and only the counter of its kind moves. The two
    # slots are free (f <= b - 1 since at most n entries are kept in n + 1 slots) or the same one.
    vals = np.empty(n + 1)
    idx = np.empty(n + 1, np.int64)
    f, b = 0, n + 1
    for i in range(n):
        x = flat[i]
        a = abs(x)
        keep = (a < zero_from) & (x > -exact_below)
        fast = a < fast_below
        vals[f] = -a
        idx[f] = i
        vals[b - 1] = -a
        idx[b - 1] = i
        f += keep & fast
        b -= keep & (not fast)
    return vals, idx, f, b


@numba.njit(cache=True)
def subtract_at(out, vals, idx, f, b):  # pragma: no cover
    """out.flat[idx[k]] -= vals[k] for k < f and k >= b (out C-contiguous): numpy's ``out -= tail``
    at those entries, the same subtraction."""
    flat = out.reshape(out.size)
    for k in range(f):
        flat[idx[k]] -= vals[k]
    for k in range(b, len(vals)):
        flat[idx[k]] -= vals[k]
