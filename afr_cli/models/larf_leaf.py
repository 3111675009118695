"""LARF's first level (paper eqs 4-5, 15): Nadaraya-Watson attention over the rows of a leaf.

mu(x, x_j) = softmax over the training rows j in x's leaf of -||x - x_j||^2 / tau0, then
keys A_k(x) = sum_j mu x_j and values B_k(x) = sum_j mu y_j. Vectorised over rows, trees and
leaf members with a ragged (CSR) layout: one entry per (row, tree, member), distances
||x||^2 + ||x_j||^2 - 2 x.x_j computed once per row set, then per tau0 a segment softmax and
the weighted sums of the members' x_j and y_j. No tensor is padded to the widest leaf or carries
the feature axis. The passes over the entries are compiled (``larf_kernels``: numpy's and
scipy's operations in their order, the same bytes; tests/test_larf_fast.py); the Gram blocks
and the exponentials are numpy's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afr_cli.ensembles.leaf_statistics import RowTensors

# Largest (query rows x training rows) block of x.x_j products computed at once: 32 MB.
CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class LeafDistances:
    """CSR over (row, tree) lines: ``members`` (nnz,) training rows, ``sqdist`` (nnz,) ||x - x_j||^2."""

    indptr: np.ndarray
    members: np.ndarray
    sqdist: np.ndarray


@dataclass(frozen=True)
class LeafAttention:
    """Leaf-attention keys A (n, T, m), values B (n, T) and ||x - A_k(x)||^2 (n, T)."""

    keys: np.ndarray
    values: np.ndarray
    key_sqdist: np.ndarray


def leaf_attention(rows: RowTensors, tau0: float, exclude_self: bool = False) -> LeafAttention:
    """The first level for every (row, tree) of ``rows``, computed once per tau0 and cached.

    ``exclude_self`` (training rows only): a row does not attend to itself in its own leaf
    (leave-one-out), unless it is alone there. The paper does not say; an option to test.
    """
    exclude = bool(exclude_self and rows.training)
    return rows.memo(("larf-leaf", float(tau0), exclude), lambda: _attend(rows, float(tau0), exclude))


def leaf_distances(rows: RowTensors, exclude_self: bool = False) -> LeafDistances:
    """Squared distances from each row to the training rows of its leaf in every tree (cached)."""
    exclude = bool(exclude_self and rows.training)
    if exclude:
        return rows.memo(
            ("larf-leaf-distances", True), lambda: _without_self(leaf_distances(rows), rows.leaves.shape[1])
        )
    return rows.memo(("larf-leaf-distances", False), lambda: _distances(rows))


def _without_self(dist: LeafDistances, T: int) -> LeafDistances:
    """Drop training row i from its own leaf lines (i*T .. i*T+T-1); a line holding only row i
    keeps it, so every line still has a member."""
    lengths = np.diff(dist.indptr)
    line_of_entry = np.repeat(np.arange(len(lengths)), lengths)
    keep = dist.members != line_of_entry // T
    kept = np.add.reduceat(keep.astype(np.int64), dist.indptr[:-1])
    keep |= np.repeat(kept == 0, lengths)
    new_lengths = np.add.reduceat(keep.astype(np.int64), dist.indptr[:-1])
    indptr = np.concatenate([[0], np.cumsum(new_lengths)])
    return LeafDistances(indptr, dist.members[keep], dist.sqdist[keep])


def _distances(rows: RowTensors) -> LeafDistances:
    from afr_cli.models import larf_kernels  # numba only where LARF's leaf attention is built

    stats, (n, T) = rows.stats, rows.leaves.shape
    leaves = rows.leaves.ravel()  # line i*T + k
    lengths = stats.counts[leaves].astype(np.int64)  # >= 1: a leaf holds a fit row
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    members = larf_kernels.leaf_members(leaves, lengths, stats.membership.indptr, stats.membership.indices, indptr)
    X_train = stats.X
    train_sq = np.einsum("jm,jm->j", X_train, X_train)
    query_sq = np.einsum("im,im->i", rows.X, rows.X)
    sqdist = np.empty(len(members))
    step = max(1, CHUNK_ELEMENTS // max(len(X_train), 1))
    for start in range(0, n, step):
        stop = min(start + step, n)
        gram = rows.X[start:stop] @ X_train.T
        larf_kernels.leaf_sqdist(gram, start, T, indptr, members, query_sq, train_sq, sqdist)
    return LeafDistances(indptr, members, sqdist)


def _attend(rows: RowTensors, tau0: float, exclude_self: bool) -> LeafAttention:
    from afr_cli.models import larf_kernels  # numba only where LARF's leaf attention is built

    dist, stats = leaf_distances(rows, exclude_self), rows.stats
    n, T = rows.leaves.shape
    low = rows.memo(("larf-leaf-minima", exclude_self), lambda: larf_kernels.segment_minima(dist.sqdist, dist.indptr))
    E = larf_kernels.segment_logits(dist.sqdist, dist.indptr, low, tau0)  # segment softmax per line
    np.exp(E, out=E)
    keys, values, key_sqdist = larf_kernels.segment_attend(E, dist.indptr, dist.members, stats.X, stats.y, rows.X, T)
    return LeafAttention(keys.reshape(n, T, -1), values.reshape(n, T), key_sqdist.reshape(n, T))
