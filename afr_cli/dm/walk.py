"""The soft machine of scikit-learn trees walked node by node, compiled: the same bits as the matrices.

``DecisionMachine.tree_predictions_soft`` builds S, t and B for the whole forest (Python loops, a
B-template check that re-derives every tree) and then sums log sigmoids along each leaf's path
with two sparse products, B+ log sigmoid(u) and B- log sigmoid(-u), for every leaf of every tree.
For trees that come straight from scikit-learn the structure needs no building and no check: this
module walks each tree from its root carrying the two partial sums, the right turns' and the left
turns', adding the same terms in the same order as the sparse products (a path's internal nodes
in increasing node id, which is the column order of B), and skips a whole subtree once either sum
is below -746 (``walk_kernels.PRUNE_BELOW``): every leaf under it then has log p < -746, exp(log p) is exactly 0 and its
p * v is a signed zero, which adds nothing to a tree's sum (a sum that starts at +0 never becomes
-0). The per-node log sigmoids and the final exponentials stay numpy's own (on AVX-512 numpy's exp
and log1p differ from libm's in the last bit, so a compiled exp would move numbers); the kernels
do only additions and comparisons. Pruning is switched off for a chunk whose u reaches -inf (a
tiny tau): there log sigmoid(-u) is NaN, and the matrices carry that NaN into every leaf below.

Only trees numbered in depth-first preorder, left child first (scikit-learn's depth-first
builder), are walked: there the leaves are visited in increasing id, the order in which the
sparse product sums a tree's leaves. Anything else (a best-first tree, a tree of another library)
is left to the matrices (``walkable`` says which).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afr_cli.dm import soft
from afr_cli.dm.machine import checked_rows, checked_tau

# Rows the kernel walks together: their node sums (nodes of the largest tree x rows, two arrays)
# stay within this many entries, so in the CPU cache, with 16 to 512 rows (512 measured 2x faster
# than 64 on 100 trees of ~130 nodes). Each row's numbers are its own: no bit depends on it.
BLOCK_ENTRIES = 65536
# Rows per chunk of ``tree_predictions``: its dense arrays (u, log sigmoid u per internal node, log p
# and p per leaf) stay within about this many entries each, a few MB, so each pass over them finds
# the last one's output in the CPU cache (hard.CHUNK_ENTRIES, 4M, measured 1.3x slower on a forest
# of 8,000 nodes). Each row's numbers are its own: no bit depends on it.
CHUNK_ENTRIES = 500_000


@dataclass(frozen=True)
class WalkedForest:
    """Every tree's nodes concatenated in id order: per node its column among the internal nodes
    (the index into u; -1 at a leaf), its two children (global node ids, -1 at a leaf) and its leaf
    index (-1 at an internal node); where each tree's nodes start (and, last, the node count); per
    leaf its tree and its value times the tree's scale; per internal node (in column order) its
    feature and threshold."""

    column: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_of: np.ndarray
    tree_start: np.ndarray
    tree_of_leaf: np.ndarray
    value: np.ndarray
    features: np.ndarray
    thresholds: np.ndarray
    n_features: int

    @property
    def n_trees(self) -> int:
        return len(self.tree_start) - 1

    @property
    def n_leaves(self) -> int:
        return len(self.value)


def walkable(trees: list, scale: np.ndarray) -> WalkedForest | None:
    """The trees as one WalkedForest (leaf values times ``scale``, one per tree), or None when a
    tree is not a fitted single-output scikit-learn tree numbered in preorder, the trees were fit
    on different numbers of features or a scale is not finite (the matrices then decide, or say
    what is wrong)."""
    from afr_cli.dm import walk_kernels  # numba only where a forest is walked

    if not trees or not np.all(np.isfinite(scale)):
        return None
    structures, n_features = [], set()
    for estimator in trees:
        tree = getattr(estimator, "tree_", None)
        if tree is None or not hasattr(tree, "children_left") or tree.n_outputs != 1 or tree.value.shape[2] != 1:
            return None
        left = np.asarray(tree.children_left, dtype=np.int64)
        if not walk_kernels.preorder(left, np.asarray(tree.children_right, dtype=np.int64)):
            return None
        structures.append(tree)
        n_features.add(int(tree.n_features))
    if len(n_features) != 1:
        return None
    start = np.cumsum([0] + [t.node_count for t in structures])
    left = np.concatenate([np.where(t.children_left == -1, -1, t.children_left + o) for t, o in zip(structures, start)])
    right = np.concatenate(
        [np.where(t.children_right == -1, -1, t.children_right + o) for t, o in zip(structures, start)]
    )
    internal, leaf = left != -1, left == -1
    column = np.full(len(left), -1, dtype=np.int64)
    column[internal] = np.arange(int(internal.sum()))
    leaf_of = np.full(len(left), -1, dtype=np.int64)
    leaf_of[leaf] = np.arange(int(leaf.sum()))
    value = np.concatenate([s * t.value[:, 0, 0].astype(np.float64) for s, t in zip(scale, structures)])
    tree_of = np.repeat(np.arange(len(structures)), np.diff(start))
    return WalkedForest(
        column=column,
        left=left.astype(np.int64),
        right=right.astype(np.int64),
        leaf_of=leaf_of,
        tree_start=start.astype(np.int64),
        tree_of_leaf=tree_of[leaf],
        value=value[leaf],
        features=np.concatenate([t.feature for t in structures]).astype(np.int64)[internal],
        thresholds=np.concatenate([t.threshold.astype(np.float64) for t in structures])[internal],
        n_features=n_features.pop(),
    )


# log sigmoid(u) = min(u, 0) - log1p(exp(-|u|)) (``soft.log_sigmoid``) is exactly min(u, 0) where
# exp(-|u|) is exactly 0 (|u| >= EXP_IS_ZERO_AT: exp rounds to 0 below about -745.13) and where
# u <= -EXACT_BELOW (then log1p(exp(u)) <= exp(-40), about 4e-18, is below half an ulp of u, 3.6e-15
# at 32 and up: u - it rounds to u). numpy's exp and log1p take 10-50x longer on an input whose
# result underflows or is subnormal, and a small tau puts most entries there (tau = 0.001: about
# half past 700), so when SPARSE_FROM of the entries lie past FAST_BELOW the exponentials are taken
# on the others only, gathered into one array, those of the slow band [FAST_BELOW, EXP_IS_ZERO_AT)
# in one of their own (below that share the gathering costs more than it saves).
FAST_BELOW = 708.0
EXP_IS_ZERO_AT = 746.0
EXACT_BELOW = 40.0
SPARSE_FROM = 0.1


def log_sigmoid(U: np.ndarray) -> np.ndarray:
    """``soft.log_sigmoid(U)``, every bit, for a C-contiguous U: its own path when few entries lie
    past FAST_BELOW, else exp and log1p (numpy's own, element by element the same numbers wherever an
    element sits in an array) taken only where needed and subtracted there from min(u, 0), which
    elsewhere is the result exactly."""
    from afr_cli.dm import walk_kernels

    if walk_kernels.count_at_least(U, FAST_BELOW) < SPARSE_FROM * U.size:
        return soft.log_sigmoid(U)
    out = np.minimum(U, 0.0)
    vals, idx, f, b = walk_kernels.split_tails(U, FAST_BELOW, EXP_IS_ZERO_AT, EXACT_BELOW)
    for part in (vals[:f], vals[b:]):
        np.exp(part, out=part)
        np.log1p(part, out=part)
    walk_kernels.subtract_at(out, vals, idx, f, b)
    return out


def tree_predictions(forest: WalkedForest, X: np.ndarray, tau: float) -> np.ndarray:
    """Each tree's soft prediction sum_i p_i v_i at temperature tau, (n, T): bit for bit
    ``DecisionMachine.tree_predictions_soft`` of the same trees and scales (X checked as it checks)."""
    from afr_cli.dm import walk_kernels

    X, tau = checked_rows(X, forest.n_features), checked_tau(tau)
    out = np.zeros((forest.n_trees, X.shape[0]))  # summed tree by tree, returned row by row
    max_nodes = int(np.diff(forest.tree_start).max())
    block = max(16, min(512, BLOCK_ENTRIES // max_nodes))
    width = len(forest.features) + forest.n_leaves
    size = max(1, CHUNK_ENTRIES // width)
    for start in range(0, X.shape[0], size):
        rows = slice(start, min(X.shape[0], start + size))
        U = X[rows].T[forest.features]  # (S x - t) / tau per internal node and row: the same
        U -= forest.thresholds[:, None]  # subtraction and division as the matrices', transposed
        U /= tau
        R = log_sigmoid(U)  # numpy's exp and log1p: the matrices' bits
        log_p, dead = walk_kernels.leaf_log_p(
            U,
            R,
            forest.column,
            forest.left,
            forest.right,
            forest.tree_start,
            forest.leaf_of,
            forest.n_leaves,
            max_nodes,
            block,
        )
        np.exp(log_p, out=log_p)  # numpy's exp, as the matrices take it
        walk_kernels.sum_by_tree(log_p, dead, forest.value, forest.tree_of_leaf, out[:, rows])
    return np.ascontiguousarray(out.T)
