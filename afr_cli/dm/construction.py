"""The matrices of fitted scikit-learn trees and ensembles (paper section 2, eqs 2-5 and 9).

A tree with L leaves gives S ((L-1) x m, one 1 per row: each internal node's feature), t (its
thresholds), B (L x (L-1): -1 where the leaf lies in the node's left subtree, i.e. where the
test ``x_f <= t`` is true on its path, +1 in the right subtree, 0 off the path) and v (the leaf
values). Internal nodes and leaves are each taken in scikit-learn's node-id order (depth-first
preorder for the default builder); the paper orders internal nodes breadth-first: any fixed
order is the same machine up to a permutation of the columns of B, the rows of S and t.
An ensemble stacks S and t and puts the trees' B blocks on a diagonal (eq 9).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from afr_cli.errors import AfrInputError

WHERE = "DecisionMachine"


@dataclass(frozen=True)
class TreeMatrices:
    """One tree's machine: node features and thresholds, B as (row, col, sign) triplets, leaf values."""

    features: np.ndarray  # (L-1,) feature index of each internal node
    thresholds: np.ndarray  # (L-1,)
    b_rows: np.ndarray  # leaf index of each nonzero of B
    b_cols: np.ndarray  # internal-node index of each nonzero of B
    b_signs: np.ndarray  # -1 (left subtree) or +1 (right subtree)
    values: np.ndarray  # (L,)
    n_features: int

    @property
    def n_leaves(self) -> int:
        return len(self.values)


def tree_structure(estimator):
    """The ``tree_`` of a fitted single-output scikit-learn regression tree, or an input error."""
    tree = getattr(estimator, "tree_", None)
    if tree is None or not hasattr(tree, "children_left"):
        raise AfrInputError(
            f"{WHERE}: {type(estimator).__name__} is not a fitted scikit-learn tree; "
            "allowed: fitted DecisionTreeRegressor / ExtraTreeRegressor"
        )
    if tree.n_outputs != 1 or tree.value.shape[2] != 1:
        raise AfrInputError(
            f"{WHERE}: {type(estimator).__name__} has {tree.n_outputs} outputs / "
            f"{tree.value.shape[2]} classes; allowed: single-output regression trees"
        )
    return tree


def tree_matrices(estimator) -> TreeMatrices:
    """S, t, B and v of one fitted tree, by one walk from the root (no recursion: deep trees are fine)."""
    tree = tree_structure(estimator)
    left, right = tree.children_left, tree.children_right
    is_leaf = left == -1
    internal_ids = np.flatnonzero(~is_leaf)
    leaf_ids = np.flatnonzero(is_leaf)
    column = np.full(tree.node_count, -1)
    column[internal_ids] = np.arange(len(internal_ids))
    row = np.full(tree.node_count, -1)
    row[leaf_ids] = np.arange(len(leaf_ids))

    rows, cols, signs = [], [], []
    stack = [(0, ())]  # (node, path of (column, sign) from the root)
    while stack:
        node, path = stack.pop()
        if is_leaf[node]:
            for c, s in path:
                rows.append(row[node])
                cols.append(c)
                signs.append(s)
            continue
        c = column[node]
        stack.append((right[node], path + ((c, 1),)))
        stack.append((left[node], path + ((c, -1),)))
    return TreeMatrices(
        features=tree.feature[internal_ids].astype(np.int64),
        thresholds=tree.threshold[internal_ids].astype(np.float64),
        b_rows=np.asarray(rows, dtype=np.int64),
        b_cols=np.asarray(cols, dtype=np.int64),
        b_signs=np.asarray(signs, dtype=np.int8),
        values=tree.value[leaf_ids, 0, 0].astype(np.float64),
        n_features=int(tree.n_features),
    )


@dataclass(frozen=True)
class EnsembleParts:
    """What a fitted ensemble predicts: intercept + sum_k weight_k * tree_k(x).

    ``average`` marks an unweighted forest (no intercept, every weight 1/T): scikit-learn sums
    the trees' predictions and divides by T, and so does the machine, to give the same
    floating-point result (a boosted ensemble adds ``weight * value`` stage by stage instead).
    """

    trees: list
    intercept: float
    weights: np.ndarray
    average: bool


def ensemble_parts(fitted, weights=None) -> EnsembleParts:
    """Trees, intercept and tree weights of a fitted RF / ERT, GBM, single tree, or any object with
    ``trees``, ``intercept`` and ``tree_weights`` (the ensemble registry's contract)."""
    from sklearn.ensemble import GradientBoostingRegressor  # not at import: a config's check needs none

    forest = False
    if hasattr(fitted, "trees") and hasattr(fitted, "tree_weights"):
        trees = list(fitted.trees)
        intercept, own = float(getattr(fitted, "intercept", 0.0)), np.asarray(fitted.tree_weights, float)
        forest = intercept == 0.0
    elif isinstance(fitted, GradientBoostingRegressor):
        if not hasattr(fitted, "estimators_"):
            raise AfrInputError(f"{WHERE}: the GradientBoostingRegressor is not fitted")
        trees = list(np.asarray(fitted.estimators_).ravel())
        intercept = _gbm_intercept(fitted)
        own = np.full(len(trees), float(fitted.learning_rate))
    elif hasattr(fitted, "estimators_") and not hasattr(fitted, "tree_"):
        trees, intercept, forest = list(fitted.estimators_), 0.0, True
        own = np.full(len(trees), 1.0 / max(len(trees), 1))
    else:
        trees, intercept, own = [fitted], 0.0, np.ones(1)
    if not trees:
        raise AfrInputError(f"{WHERE}: the ensemble has no trees")
    if weights is not None:
        own = np.asarray(weights, dtype=float)
        if own.shape != (len(trees),) or not np.all(np.isfinite(own)):
            raise AfrInputError(
                f"{WHERE}: weights: shape {own.shape}, or not finite; "
                f"allowed: {len(trees)} finite numbers, one per tree"
            )
    T = len(trees)
    average = forest and weights is None and T > 1 and bool(np.all(own == 1.0 / T))
    return EnsembleParts(trees, intercept, own, average)


def _gbm_intercept(gbm) -> float:
    """The constant a GradientBoostingRegressor starts from ('zero' or a constant DummyRegressor)."""
    init = gbm.init_
    if isinstance(init, str) and init == "zero":
        return 0.0
    constant = getattr(init, "constant_", None)
    if constant is None or np.size(constant) != 1:
        raise AfrInputError(
            f"{WHERE}: GradientBoostingRegressor.init_ is {type(init).__name__}; "
            "allowed: 'zero' or a constant DummyRegressor (the default)"
        )
    return float(np.ravel(constant)[0])


@dataclass(frozen=True)
class StackedMatrices:
    """S, t, B (block diagonal) and v of several trees, ready for DecisionMachine."""

    S: sp.csr_matrix
    t: np.ndarray
    B: sp.csr_matrix
    v: np.ndarray


def stack(parts: list[TreeMatrices], value_scale: np.ndarray) -> StackedMatrices:
    """Eq 9: stacked S and t, block-diagonal B, and each tree's values times its scale."""
    m = {p.n_features for p in parts}
    if len(m) != 1:
        raise AfrInputError(f"{WHERE}: the trees were fit on different numbers of features {sorted(m)}")
    n_features = m.pop()
    col_off = np.cumsum([0] + [len(p.features) for p in parts])
    row_off = np.cumsum([0] + [p.n_leaves for p in parts])
    features = np.concatenate([p.features for p in parts])
    N, L = int(col_off[-1]), int(row_off[-1])
    S = sp.csr_matrix((np.ones(N, dtype=np.int8), features, np.arange(N + 1)), shape=(N, n_features))
    B = sp.csr_matrix(
        (
            np.concatenate([p.b_signs for p in parts]),
            (
                np.concatenate([p.b_rows + row_off[k] for k, p in enumerate(parts)]),
                np.concatenate([p.b_cols + col_off[k] for k, p in enumerate(parts)]),
            ),
        ),
        shape=(L, N),
        dtype=np.int8,
    )
    v = np.concatenate([scale * p.values for scale, p in zip(value_scale, parts)])
    return StackedMatrices(S, np.concatenate([p.thresholds for p in parts]), B, v)
