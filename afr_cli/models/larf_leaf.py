"""LARF's first level (paper eqs 4-5, 15): Nadaraya-Watson attention over the rows of a leaf.

mu(x, x_j) = softmax over the training rows j in x's leaf of -||x - x_j||^2 / tau0, then
keys A_k(x) = sum_j mu x_j and values B_k(x) = sum_j mu y_j. Vectorised over rows, trees and
leaf members (padded member lists, masked softmax, ||x - x_j||^2 = ||x||^2 + ||x_j||^2 - 2 x.x_j);
rows go in chunks so the per-chunk gathers stay below ``CHUNK_ELEMENTS`` floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afr_cli.forests import RowTensors, softmax_neg

# Largest (rows, trees, leaf width, features) gather of one chunk: 4M floats = 32 MB.
CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class LeafAttention:
    """Leaf-attention keys A (n, T, m), values B (n, T) and ||x - A_k(x)||^2 (n, T)."""

    keys: np.ndarray
    values: np.ndarray
    key_sqdist: np.ndarray


def leaf_attention(rows: RowTensors, tau0: float) -> LeafAttention:
    """The first level for every (row, tree) of ``rows``, computed once per tau0 and cached."""
    return rows.memo(("larf-leaf", float(tau0)), lambda: _compute(rows, float(tau0)))


def _compute(rows: RowTensors, tau0: float) -> LeafAttention:
    stats = rows.stats
    members, mask = stats.padded_members()
    X_train, y_train = stats.X, stats.y
    train_sq = np.einsum("jm,jm->j", X_train, X_train)
    query_sq = np.einsum("im,im->i", rows.X, rows.X)
    n, T = rows.leaves.shape
    m, width = X_train.shape[1], members.shape[1]
    keys = np.empty((n, T, m))
    values = np.empty((n, T))
    step = max(1, CHUNK_ELEMENTS // (T * width * max(m, 1)))
    for start in range(0, n, step):
        part = slice(start, min(start + step, n))
        leaves = rows.leaves[part]
        mem = members[leaves]                                   # (c, T, width) training rows
        cross = np.take_along_axis(rows.X[part] @ X_train.T, mem.reshape(len(leaves), -1), axis=1)
        d = query_sq[part, None, None] + train_sq[mem] - 2.0 * cross.reshape(mem.shape)
        d = np.where(mask[leaves], np.maximum(d, 0.0), np.inf)  # padding gets weight 0
        mu = softmax_neg(d, tau0, axis=2)
        values[part] = np.einsum("ctw,ctw->ct", mu, y_train[mem])
        keys[part] = np.einsum("ctw,ctwm->ctm", mu, X_train[mem])
    diff = keys - rows.X[:, None, :]
    return LeafAttention(keys, values, np.einsum("ntm,ntm->nt", diff, diff))
