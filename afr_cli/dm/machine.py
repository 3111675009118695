"""DecisionMachine: a tree or a tree ensemble as matrices (Decision Machines paper, sections 2-3).

A tree with L leaves over m features is (S, t, B, v): S in {0,1}^((L-1) x m) picks each internal
node's feature, t holds the thresholds, B in {-1,0,1}^(L x (L-1)) has -1 where the leaf lies in
the node's left subtree (``x_f <= t`` true), +1 in its right subtree, 0 off its path, and v
holds the leaf values. The hard machine (eqs 2-5) is h = sgn(S x - t) (sgn(0) = -1),
p = Bbar h (row i of B divided by ||B_i||^2: the "logical similarity", which lies in [-1, 1] --
-1 is reached when every test on a leaf's path goes the other way -- not (-1, 1] as printed);
the exit leaf is the unique i with p_i = 1 (Theorem 2). An ensemble (eq 9) stacks S and t and
puts the trees' B on a block diagonal; the prediction is intercept + sum of the exit leaves'
values (values already times each tree's weight, e.g. the learning rate), or, for an unweighted
forest (``average_trees``), that sum divided by T, as scikit-learn computes it.

Worked example (paper Fig. 1, x = (2, 1, 2, 2), internal nodes breadth-first as the paper):
p = (1/3, 0, -1/2, -1, 1, 0), exit v5. The paper prints p4 = 0: an erratum, B_4 h = (-1)(+1) +
(+1)(-1) = -2 and ||B_4||^2 = 2. From fitted trees we order internal nodes and leaves by
scikit-learn's node ids (depth-first preorder); any fixed order is the same machine.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from afr_cli.core.params import in_interval, is_number
from afr_cli.dm import construction, hard, io, soft
from afr_cli.dm.rebuild import Leaf, NotATreeTemplate, Split, flatten, nested, skeleton
from afr_cli.errors import AfrInputError

WHERE = construction.WHERE


class DecisionMachine:
    """A fitted tree or ensemble in matrix form: exact hard predictions and the soft machine.

    Attributes: ``S`` (scipy.sparse CSR, (L-1) x m), ``t`` ((L-1,)), ``B`` (scipy.sparse CSR,
    int8, L x (L-1)), ``v`` ((L,)), ``intercept``, ``average_trees``; ``n_trees``, ``n_leaves``,
    ``n_nodes`` (internal), ``n_features``. L counts the leaves of all trees.
    """

    def __init__(self, S, t, B, v, intercept: float = 0.0, average_trees: bool = False):
        self.S = _selection(S)
        N, m = self.S.shape
        self.t = _vector(t, "t", N, "one threshold per row of S")
        self.B = _template(B, N)
        self.v = _vector(v, "v", self.B.shape[0], "one value per row of B (leaf)")
        if not np.isfinite(intercept):
            raise AfrInputError(f"{WHERE}: intercept: {intercept!r}; allowed: a finite number")
        self.intercept, self.average_trees = float(intercept), bool(average_trees)
        try:
            self._skeleton = skeleton(self.B)
        except NotATreeTemplate as err:
            raise AfrInputError(
                f"{WHERE}: B: {_rank_note(self.B)}{err}; allowed: the template matrix of binary trees (paper sec. 2)"
            ) from None
        self._features = self.S.indices.astype(np.int64)
        self._t32 = hard.float32_floor(self.t)
        self._tree_of_leaf = self._skeleton.tree_of_leaf
        self._contiguous = bool(np.all(np.diff(self._tree_of_leaf) >= 0))
        self._Bf = self.B.astype(np.float32)
        self._norms = np.asarray(abs(self.B).sum(axis=1), dtype=np.float32).ravel()
        self._Bplus = (self.B > 0).astype(np.float64).tocsr()
        self._Bminus = (self.B < 0).astype(np.float64).tocsr()
        L = self.B.shape[0]
        self._leaf_tree = sp.csr_matrix((np.ones(L), (np.arange(L), self._tree_of_leaf)), shape=(L, self.n_trees))

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def from_tree(cls, tree) -> DecisionMachine:
        """From a fitted scikit-learn regression tree, or a nested ``Split``/``Leaf`` tree."""
        if isinstance(tree, (Split, Leaf)):
            return cls.from_nodes([tree])
        part = construction.tree_matrices(tree)
        m = construction.stack([part], np.ones(1))
        return cls(m.S, m.t, m.B, m.v)

    @classmethod
    def from_ensemble(cls, fitted, weights=None) -> DecisionMachine:
        """From a fitted RandomForest/ExtraTrees (weights 1/T), GradientBoosting (intercept from
        ``init_``, values times the learning rate) or any object with ``trees``, ``intercept`` and
        ``tree_weights``; ``weights`` (one per tree) replaces the ensemble's own tree weights."""
        parts = construction.ensemble_parts(fitted, weights)
        scale = np.ones(len(parts.trees)) if parts.average else parts.weights
        m = construction.stack([construction.tree_matrices(tr) for tr in parts.trees], scale)
        return cls(m.S, m.t, m.B, m.v, parts.intercept, parts.average)

    @classmethod
    def from_nodes(
        cls, roots: list, n_features: int | None = None, intercept: float = 0.0, average_trees: bool = False
    ) -> DecisionMachine:
        """From nested trees (``to_trees()``'s output); node columns and leaf indices are kept."""
        features, thresholds, B, v = flatten(list(roots))
        N, L = B.shape[1], B.shape[0]
        cols = sorted(_columns(roots))
        if cols != list(range(N)) or sorted(_leaf_indices(roots)) != list(range(L)):
            raise AfrInputError(
                f"{WHERE}: nodes: columns / leaf indices are not 0..{N - 1} / 0..{L - 1} "
                "each once; allowed: trees as returned by to_trees()"
            )
        m = int(n_features if n_features is not None else (features.max() + 1 if N else 1))
        S = sp.csr_matrix((np.ones(N, dtype=np.int8), features, np.arange(N + 1)), shape=(N, m))
        return cls(S, thresholds, B, v, intercept, average_trees)

    # ---- sizes ------------------------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        return len(self._skeleton.roots)

    @property
    def n_leaves(self) -> int:
        return self.B.shape[0]

    @property
    def n_nodes(self) -> int:
        return self.B.shape[1]

    @property
    def n_features(self) -> int:
        return self.S.shape[1]

    # ---- the hard machine -------------------------------------------------------------------
    def scores(self, X: ArrayLike) -> np.ndarray:
        """p = Bbar sgn(S x - t) for every row, (n, L): 1 at each tree's exit leaf, < 1 elsewhere."""
        X = self._checked(X)
        out = np.empty((X.shape[0], self.n_leaves))
        norms = np.where(self._norms > 0, self._norms, 1.0).astype(np.float64)  # a one-leaf tree: p = 1
        X32 = X.astype(np.float32)
        for rows in self._chunks(X):
            Bh = hard.template_products(self._Bf, X32[rows], self._features, self._t32).astype(np.float64)
            Bh[self._norms == 0] = 1.0
            out[rows] = (Bh / norms[:, None]).T
        return out

    def leaves(self, X: ArrayLike) -> np.ndarray:
        """The exit leaf (row of B) of every row: shape (n,) for one tree, (n, T) for T trees."""
        X = self._checked(X)
        exits = np.empty((X.shape[0], self.n_trees), dtype=np.int64)
        for rows, chunk in self._exit_chunks(X):
            exits[rows] = chunk
        return exits[:, 0] if self.n_trees == 1 else exits

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The tree's or ensemble's prediction; equal, bit for bit, to scikit-learn's."""
        X = self._checked(X)
        out = np.empty(X.shape[0])
        for rows, exits in self._exit_chunks(X):
            vals = self.v[exits]
            if self.average_trees:  # scikit-learn: sum the trees in order, then divide by T
                out[rows] = np.cumsum(vals, axis=1)[:, -1] / self.n_trees
            else:  # intercept, then each tree's weighted value in order
                start = np.full((len(vals), 1), self.intercept)
                out[rows] = np.cumsum(np.hstack([start, vals]), axis=1)[:, -1]
        return out

    def _exit_chunks(self, X: np.ndarray):
        """(row slice, (rows, T) exit leaves ordered by tree) for bounded chunks of float32-rounded X."""
        X32 = X.astype(np.float32)
        for rows in self._chunks(X):
            Bh = hard.template_products(self._Bf, X32[rows], self._features, self._t32)
            exits = hard.exit_leaves(Bh, self._norms, self.n_trees)
            if not self._contiguous:  # a tree's leaves are not consecutive rows of B: order by tree
                exits = np.take_along_axis(exits, np.argsort(self._tree_of_leaf[exits], axis=1, kind="stable"), 1)
            yield rows, exits

    # ---- the soft machine -------------------------------------------------------------------
    def leaf_probabilities(self, X: ArrayLike, tau: float) -> np.ndarray:
        """Eqs 12-13: p (n, L), each tree's p summing to 1, at temperature tau > 0."""
        X, tau = self._checked(X), checked_tau(tau)
        out = np.empty((X.shape[0], self.n_leaves))
        for rows in self._chunks(X):
            out[rows] = self._soft_leaves(X[rows], tau).T
        return out

    def tree_predictions_soft(self, X: ArrayLike, tau: float) -> np.ndarray:
        """Each tree's soft prediction sum_{i in tree} p_i v_i, (n, T)."""
        X, tau = self._checked(X), checked_tau(tau)
        out = np.empty((X.shape[0], self.n_trees))
        for rows in self._chunks(X):
            out[rows] = self._soft_trees(X[rows], tau)
        return out

    def predict_soft(self, X: ArrayLike, tau: float) -> np.ndarray:
        """The soft machine's prediction: intercept + the trees' soft predictions (their mean for
        an unweighted forest); tends to ``predict`` as tau -> 0 off the thresholds."""
        X, tau = self._checked(X), checked_tau(tau)
        out = np.empty(X.shape[0])
        for rows in self._chunks(X):
            per_tree = self._soft_trees(X[rows], tau)
            out[rows] = per_tree.mean(axis=1) if self.average_trees else self.intercept + per_tree.sum(axis=1)
        return out

    def _soft_leaves(self, X: np.ndarray, tau: float) -> np.ndarray:
        return soft.leaf_probabilities(self._Bplus, self._Bminus, hard.margins(X, self._features, self.t), tau)

    def _soft_trees(self, X: np.ndarray, tau: float) -> np.ndarray:
        p = self._soft_leaves(X, tau)
        return np.asarray(self._leaf_tree.T @ (p * self.v[:, None])).T

    # ---- structure and disk -----------------------------------------------------------------
    def to_trees(self) -> list:
        """Every tree rebuilt from B alone (root: the column with no zeros; recurse on the sign)
        as nested ``Split``/``Leaf`` nodes carrying S's feature, t's threshold and v's value."""
        return nested(self._skeleton, self._features, self.t, self.v)

    def to_tree(self):
        """The one tree of a single-tree machine as nested ``Split``/``Leaf`` nodes."""
        if self.n_trees != 1:
            raise AfrInputError(
                f"{WHERE}: to_tree: the machine holds {self.n_trees} trees; "
                "allowed: one tree (use to_trees() for an ensemble)"
            )
        return self.to_trees()[0]

    def save(self, path: str | os.PathLike, extra: dict | None = None) -> None:
        """Write the machine to a .npz file (atomically); ``extra`` arrays (e.g. the data it was
        fit on) are stored beside it and ignored by ``load``."""
        io.write(path, self.S, self.t, self.B, self.v, self.intercept, self.average_trees, extra)

    @classmethod
    def load(cls, path: str | os.PathLike) -> DecisionMachine:
        """Read a machine written by ``save``; a bad file is an input error naming it."""
        args = io.read(path)
        try:
            return cls(**args)
        except AfrInputError as err:
            raise AfrInputError(f"{path}: {err}") from None

    def __repr__(self) -> str:
        return (
            f"DecisionMachine(trees={self.n_trees}, leaves={self.n_leaves}, "
            f"internal_nodes={self.n_nodes}, features={self.n_features})"
        )

    # ---- helpers ----------------------------------------------------------------------------
    def _checked(self, X) -> np.ndarray:
        return checked_rows(X, self.n_features)

    def _chunks(self, X: np.ndarray):
        return hard.chunks(X.shape[0], self.n_nodes + self.n_leaves)


def checked_rows(X, n_features: int) -> np.ndarray:
    """X as the trees test it (float32-rounded, held in float64), or an input error: not numeric,
    not (n, n_features), or not finite."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise AfrInputError(f"{WHERE}: X: {err}; allowed: a numeric (n, {n_features}) array") from None
    if X.ndim != 2 or X.shape[1] != n_features:
        raise AfrInputError(f"{WHERE}: X: shape {X.shape}; allowed: (n, {n_features})")
    X = hard.as_tested(X)
    if not np.all(np.isfinite(X)):
        raise AfrInputError(
            f"{WHERE}: X: NaN, infinity or a value too large for float32; "
            "allowed: finite values (as scikit-learn's trees require)"
        )
    return X


def checked_tau(tau) -> float:
    """tau as a float, or an input error unless it is a finite number > 0."""
    if not is_number(tau) or not in_interval(float(tau), 0, None, low_open=True):
        raise AfrInputError(f"{WHERE}: tau: {tau!r}; allowed: a finite number > 0")
    return float(tau)


def _selection(S) -> sp.csr_matrix:
    S = sp.csr_matrix(S)
    S.sum_duplicates()
    S.eliminate_zeros()
    not_single = np.diff(S.indptr) != 1
    if not np.any(not_single):  # then row i holds exactly data[i]
        not_single = S.data != 1
    if np.any(not_single):
        bad = int(np.flatnonzero(not_single)[0])
        raise AfrInputError(
            f"{WHERE}: S: row {bad} is not a single 1; allowed: a 0/1 matrix with exactly "
            "one 1 per row (the internal node's feature)"
        )
    return sp.csr_matrix(S, dtype=np.int8)


def _vector(x, name: str, size: int, what: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise AfrInputError(f"{WHERE}: {name}: not numeric; allowed: {what}") from None
    if a.shape != (size,) or not np.all(np.isfinite(a)):
        raise AfrInputError(
            f"{WHERE}: {name}: shape {a.shape} or non-finite values; allowed: {size} finite numbers ({what})"
        )
    return a


def _template(B, N: int) -> sp.csr_matrix:
    B = sp.csr_matrix(B)
    if B.shape[1] != N or B.shape[0] < 1:
        raise AfrInputError(f"{WHERE}: B: shape {B.shape}; allowed: (L, {N}), one column per row of S")
    if B.nnz and not np.all(np.isin(B.data, (-1, 0, 1))):
        raise AfrInputError(f"{WHERE}: B: entries other than -1, 0, 1; allowed: -1, 0, 1")
    B = sp.csr_matrix(B, dtype=np.int8)
    B.eliminate_zeros()
    coo = B.tocoo()
    for sign, name in ((1, "+1"), (-1, "-1")):
        has = np.zeros(N, dtype=bool)
        has[coo.col[coo.data == sign]] = True
        if not has.all():
            j = int(np.flatnonzero(~has)[0])
            raise AfrInputError(
                f"{WHERE}: B: column {j} has no {name}; allowed: every column (internal "
                "node) has at least one +1 and one -1 (leaves on both sides)"
            )
    return B


def _rank_note(B: sp.csr_matrix) -> str:
    """'rank r < c: ' when B is column-rank deficient (Theorem 1's precondition), if cheap to tell."""
    if B.shape[1] > 3000:
        return ""
    rank = np.linalg.matrix_rank(B.toarray().astype(float))
    return f"rank {rank} < {B.shape[1]} columns (not full column rank); " if rank < B.shape[1] else ""


def _columns(roots) -> list[int]:
    return [n.column for n in _walk(roots) if isinstance(n, Split)]


def _leaf_indices(roots) -> list[int]:
    return [n.index for n in _walk(roots) if isinstance(n, Leaf)]


def _walk(roots):
    stack = list(roots)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Split):
            stack.extend((node.left, node.right))
