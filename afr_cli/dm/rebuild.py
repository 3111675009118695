"""Trees recovered from the template matrix B alone (paper sec. 2.2), and checked on the way.

The root of a tree is the column of B with no zero over that tree's leaves; its -1 rows are the
left subtree and its +1 rows the right one; recurse. A matrix passes only if every column is
reached exactly once this way, which is exactly when B is the template of binary trees (then it
has full column rank: Theorem 1). Trees of a forest are the connected blocks of B (eq 9).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components


@dataclass(frozen=True)
class Leaf:
    """A leaf: its row of B (index into v) and its value."""

    index: int
    value: float


@dataclass(frozen=True)
class Split:
    """An internal node: its column of B, the test ``x[feature] <= threshold`` (true: left)."""

    column: int
    feature: int
    threshold: float
    left: Leaf | Split
    right: Leaf | Split


class NotATreeTemplate(ValueError):
    """B is not the template matrix of binary trees; the message says where it fails."""


@dataclass(frozen=True)
class Skeleton:
    """The trees' shape: per column its two children (>= 0: a column, < 0: leaf -1-child), the
    roots (same encoding), and each leaf's tree index (trees ordered by their first leaf)."""

    left: np.ndarray
    right: np.ndarray
    roots: list[int]
    tree_of_leaf: np.ndarray


def skeleton(B: sp.csr_matrix) -> Skeleton:
    """Recover the trees from B, or raise NotATreeTemplate."""
    L, N = B.shape
    csc = sp.csc_matrix(B)
    csc.sort_indices()
    by_support: dict[bytes, int] = {}
    for j in range(N):
        rows = csc.indices[csc.indptr[j] : csc.indptr[j + 1]]
        key = rows.astype(np.int64).tobytes()
        if key in by_support:
            raise NotATreeTemplate(f"columns {by_support[key]} and {j} have the same nonzero rows")
        by_support[key] = j

    graph = sp.bmat([[None, abs(B)], [abs(B).T, None]], format="csr") if N else sp.csr_matrix((L, L))
    _, label = connected_components(graph, directed=False)
    leaf_label = label[:L]
    firsts = {}
    for i, lab in enumerate(leaf_label):
        firsts.setdefault(int(lab), i)
    order = sorted(firsts, key=firsts.get)
    tree_index = {lab: k for k, lab in enumerate(order)}
    tree_of_leaf = np.array([tree_index[int(lab)] for lab in leaf_label], dtype=np.int64)

    left, right = np.full(N, -(L + 1)), np.full(N, -(L + 1))
    used = np.zeros(N, dtype=bool)
    roots = []
    for lab in order:
        rows = np.flatnonzero(leaf_label == lab)
        roots.append(_node(rows, by_support, lab_where=f"tree {tree_index[lab]}"))
        stack = [roots[-1]] if roots[-1] >= 0 else []
        while stack:
            j = stack.pop()
            if used[j]:
                raise NotATreeTemplate(f"column {j} is reached twice")
            used[j] = True
            rows = csc.indices[csc.indptr[j] : csc.indptr[j + 1]]
            signs = csc.data[csc.indptr[j] : csc.indptr[j + 1]]
            for side, out in ((rows[signs < 0], left), (rows[signs > 0], right)):
                child = _node(np.sort(side), by_support, lab_where=f"below column {j}")
                out[j] = child
                if child >= 0:
                    stack.append(child)
    if not used.all():
        raise NotATreeTemplate(
            f"column {int(np.flatnonzero(~used)[0])} is no node of any tree "
            "(its nonzero rows are not the leaves of a subtree)"
        )
    return Skeleton(left, right, roots, tree_of_leaf)


def _node(rows: np.ndarray, by_support: dict[bytes, int], lab_where: str) -> int:
    """The node whose leaves are exactly ``rows``: the leaf itself, or the column with that support."""
    if len(rows) == 1:
        return -1 - int(rows[0])
    j = by_support.get(rows.astype(np.int64).tobytes())
    if j is None:
        shown = ", ".join(map(str, rows[:6])) + (", ..." if len(rows) > 6 else "")
        raise NotATreeTemplate(
            f"{lab_where}: no column is nonzero on exactly the leaves {{{shown}}} (a subtree needs one as its root)"
        )
    return j


def nested(sk: Skeleton, features: np.ndarray, thresholds: np.ndarray, values: np.ndarray) -> list:
    """Each tree as nested Split / Leaf objects (built bottom-up, without recursion)."""

    def leaf(code: int) -> Leaf:
        return Leaf(int(-1 - code), float(values[-1 - code]))

    built: dict[int, Split] = {}
    trees = []
    for root in sk.roots:
        if root < 0:
            trees.append(leaf(root))
            continue
        order, stack = [], [root]
        while stack:  # preorder, then build in reverse so children exist before parents
            j = stack.pop()
            order.append(j)
            stack.extend(c for c in (sk.left[j], sk.right[j]) if c >= 0)
        for j in reversed(order):
            kids = [built[c] if c >= 0 else leaf(c) for c in (sk.left[j], sk.right[j])]
            built[j] = Split(int(j), int(features[j]), float(thresholds[j]), kids[0], kids[1])
        trees.append(built[root])
    return trees


def flatten(roots: list) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix, np.ndarray]:
    """(features, thresholds, B, v) of nested trees, keeping each node's column and leaf index."""
    splits, leaves = [], []
    stack = list(roots)
    paths = {id(r): () for r in roots}
    entries = []
    while stack:
        node = stack.pop()
        path = paths.pop(id(node))
        if isinstance(node, Leaf):
            leaves.append(node)
            entries.extend((node.index, c, s) for c, s in path)
            continue
        splits.append(node)
        for child, sign in ((node.left, -1), (node.right, 1)):
            paths[id(child)] = path + ((node.column, sign),)
            stack.append(child)
    N, L = len(splits), len(leaves)
    features, thresholds, v = np.zeros(N, dtype=np.int64), np.zeros(N), np.zeros(L)
    for s in splits:
        features[s.column], thresholds[s.column] = s.feature, s.threshold
    for leaf in leaves:
        v[leaf.index] = leaf.value
    r, c, sgn = (np.array([e[k] for e in entries], dtype=np.int64) for k in range(3))
    B = sp.csr_matrix((sgn.astype(np.int8), (r, c)), shape=(L, N), dtype=np.int8)
    return features, thresholds, B, v
