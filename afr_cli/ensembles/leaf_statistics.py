"""Leaf statistics of a fitted ensemble: the keys A_k(x) and values B_k(x) the families attend over.

Keys are the mean feature vector of the training rows in a leaf, over every row the ensemble
was fit on (not only a tree's bootstrap sample), as the papers' authors' code does (design.md
section 2). Values are what the ensemble declares (``afr_cli.ensembles.base``): the training
rows' mean target (forests) or its own scaled leaf value (GBM, with its intercept h0).
Everything is vectorised over (rows, trees): leaves get global ids (node id + the tree's
offset), and a sparse leaf-by-row membership matrix gives means and member lists at once. The
matrix is built by a compiled counting sort (numba, imported at first use) into the arrays scipy's
own conversion gives: tests/test_unit_overhead.py pins them, bit for bit.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from afr_cli.ensembles import OWN, FittedEnsemble, from_fitted


class LeafStatistics:
    """Per-leaf mean feature vector, value, count and member rows of a fitted ensemble.

    Takes a FittedEnsemble (or a fitted scikit-learn forest, tree or GBM, see
    ``ensembles.from_fitted``); ``intercept`` is the ensemble's (0 for forests, h0 for a GBM).
    """

    def __init__(self, ensemble: FittedEnsemble, X: np.ndarray, y: np.ndarray):
        self.ensemble = from_fitted(ensemble)
        self.intercept = self.ensemble.intercept
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        node_counts = np.array([tree.tree_.node_count for tree in self.ensemble.trees])
        self.offsets = np.concatenate([[0], np.cumsum(node_counts)[:-1]])
        self.n_nodes = int(node_counts.sum())
        self.train_leaves = self.leaf_ids(self.X)
        # membership[leaf, row] = 1 when training row `row` falls into global leaf `leaf`
        self.membership = membership_matrix(self.train_leaves, self.n_nodes)
        self.counts = np.diff(self.membership.indptr).astype(float)  # what membership.sum(axis=1) adds up
        safe = np.maximum(self.counts, 1)[:, None]
        self.mean_x = np.asarray(self.membership @ self.X) / safe
        self.mean_y = np.asarray(self.membership @ self.y[:, None]).ravel() / safe.ravel()
        # B of every global node: the training mean, or the ensemble's own scaled leaf value
        self.leaf_value = (
            np.concatenate(self.ensemble.own_leaf_values()) if self.ensemble.leaf_values == OWN else self.mean_y
        )

    @property
    def forest(self) -> FittedEnsemble:
        """The fitted ensemble (its older name)."""
        return self.ensemble

    @property
    def n_trees(self) -> int:
        """T, the number of trees (stages, for a GBM)."""
        return len(self.offsets)

    def leaf_ids(self, X: np.ndarray) -> np.ndarray:
        """Global leaf id of every (row, tree) of X, shape (n, T)."""
        return self.ensemble.apply(np.asarray(X, dtype=float)) + self.offsets

    def members(self, leaf: int) -> np.ndarray:
        """Training rows in one global leaf."""
        m = self.membership
        return m.indices[m.indptr[leaf] : m.indptr[leaf + 1]]

    def rows(self, X: np.ndarray | None = None) -> RowTensors:
        """Keys, values and distances for query rows X (None = the training rows)."""
        if X is None:
            return RowTensors(self, self.X, self.train_leaves, training=True)
        X = np.asarray(X, dtype=float)
        return RowTensors(self, X, self.leaf_ids(X))


def membership_matrix(leaves: np.ndarray, n_nodes: int) -> sp.csr_matrix:
    """The (n_nodes, n) CSR leaf-by-row matrix of ``leaves`` (n, T): a one at (leaf, row) for
    every (row, tree), each leaf's rows in increasing order, int32 indices.

    It is the matrix ``sp.csr_matrix((ones, (leaves.T.ravel(), rows)), shape)`` builds (scipy's
    COO to CSR conversion: a counting sort that keeps each leaf's rows in input order, tree by
    tree and row by row, then nothing to sum, as no (leaf, row) pair repeats), built by one
    compiled counting sort (``_members``) instead of scipy's conversion and its checks,
    about 7x less CPU for 100 trees on 1000 rows. Leaf ids outside [0, n_nodes) or sizes beyond
    int32 go the COO way, which refuses or widens them as before."""
    n, T = leaves.shape
    if n * T >= _INT32_MAX or n_nodes >= _INT32_MAX or (leaves.size and (leaves.min() < 0 or leaves.max() >= n_nodes)):
        rows = np.tile(np.arange(n), T)
        return sp.csr_matrix((np.ones(n * T), (leaves.T.ravel(), rows)), shape=(n_nodes, n))
    indptr, indices = _kernel("members")(leaves, n_nodes)
    return sp.csr_matrix((np.ones(n * T), indices, indptr), shape=(n_nodes, n))


_INT32_MAX = 2**31 - 1
_KERNELS: dict = {}


def _kernel(name: str):
    """The function ``_NAME`` compiled by numba (cached on disk) at its first use: importing this
    module (every command that reads the engine) does not import numba."""
    if name not in _KERNELS:
        import numba

        _KERNELS[name] = numba.njit(cache=True)(globals()[f"_{name}"])
    return _KERNELS[name]


def _members(leaves, n_nodes):  # pragma: no cover (run compiled)
    """(indptr, indices) of the leaf-by-row CSR matrix: per leaf its count, their running sum,
    then each (row, tree) placed at its leaf's next free slot, tree by tree and row by row."""
    n, T = leaves.shape
    indptr = np.zeros(n_nodes + 1, np.int32)
    for t in range(T):
        for i in range(n):
            indptr[leaves[i, t] + 1] += 1
    for j in range(n_nodes):
        indptr[j + 1] += indptr[j]
    slot = indptr[:-1].copy()
    indices = np.empty(n * T, np.int32)
    for t in range(T):
        for i in range(n):
            leaf = leaves[i, t]
            indices[slot[leaf]] = i
            slot[leaf] += 1
    return indptr, indices


class RowTensors:
    """For a set of query rows: leaf ids (n, T), keys A (n, T, m), values B (n, T), distances.

    Families share one instance per (fold, row set), so the tensors are built once and reused
    by every model and every grid point.
    """

    def __init__(self, stats: LeafStatistics, X: np.ndarray, leaves: np.ndarray, training: bool = False):
        self.stats = stats
        self.X = X
        self.leaves = leaves
        self.training = training  # row i is training row i (it sits in its own leaves)
        self._cache: dict = {}

    @property
    def n_rows(self) -> int:
        """n, the number of query rows."""
        return self.X.shape[0]

    @cached_property
    def keys(self) -> np.ndarray:
        """A_k(x): mean training feature vector of x's leaf in tree k, (n, T, m)."""
        return self.stats.mean_x[self.leaves]

    @cached_property
    def values(self) -> np.ndarray:
        """B_k(x): the value of x's leaf in tree k (mean training target, or the GBM's T lr h_k), (n, T)."""
        return self.stats.leaf_value[self.leaves]

    @cached_property
    def key_sqdist(self) -> np.ndarray:
        """||x - A_k(x)||^2, (n, T)."""
        diff = self.keys - self.X[:, None, :]
        return np.einsum("ntm,ntm->nt", diff, diff)

    def memo(self, key, build):
        """Cache a derived tensor (a family's features) on this row set."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


def softmax_neg(d: np.ndarray, tau: float, axis: int = -1) -> np.ndarray:
    """softmax(-d / tau) along ``axis`` (papers' convention: tau divides), numerically stable."""
    z = -np.asarray(d, dtype=float) / tau
    z -= z.max(axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=axis, keepdims=True)
    return z
