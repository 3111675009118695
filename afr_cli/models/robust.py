"""Robust interval-weighted RF (Utkin, Kovalev, Coolen; the Russian paper): the math.

Tree l's prediction at x is its leaf mean z_l(x), known only up to the confidence interval
z_l +- h_l, h_l = t_{1-alpha/2, n_l-1} s_l / sqrt(n_l) (s_l the leaf's sample std, ddof 1;
h_l = 0 when n_l < 2). The pessimistic cost of tree l over the n training rows takes, per row,
the interval end farther from y_i (the upper end when y_i is below the midpoint; the printed rule
drops the /2 of the midpoint, a typo), so

    c_l = sum_i |y_i - z*_l(i)| = sum_i (|y_i - z_l(x_i)| + h_l(x_i)).

c is divided by n and by the standard deviation of the training targets (a mean per training
row, in units of the target's spread) so that one lambda grid fits every dataset and training
size. The weights solve  min_w c.w + lambda ||w||^2  over
W(eps) = {(1-eps)/T <= w_l <= 1, sum w = 1}: an LP at lambda = 0, a QP otherwise; the forest
predicts sum_l w_l z_l(x). eps = 0 forces w = 1/T, the plain forest.

Leaf statistics, two readings (``leaf_stats``): "bootstrap" uses each tree's own bootstrap
sample (scikit-learn's node value, and its impurity times n/(n-1), n the bootstrap draws in the
leaf), so eps = 0 is scikit-learn's RF prediction; "train" uses all training rows in the leaf
(the paper's literal D_l).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from afr_cli.ensembles.leaf_statistics import LeafStatistics, RowTensors
from afr_cli.models.base import DESIGN, EPS, MIXING, Family, Param, uniform
from afr_cli.solvers.solve import ConstraintBuilder, LinearConstraints, LinearProblem, QuadraticProblem

LEAF_STATS = ("bootstrap", "train")


def half_widths(sd: np.ndarray, counts: np.ndarray, alpha: float) -> np.ndarray:
    """t_{1-alpha/2, n-1} sd / sqrt(n) per leaf; 0 where n < 2 (no interval can be estimated).

    The t quantile is taken once per distinct count and spread back (a forest's leaves hold a few
    dozen distinct counts; scipy's quantile, a scalar function applied element by element, cost
    most of the family's features when taken per leaf): each leaf's quantile is the same number,
    and the product and quotient after it are the same operations, so every bit is unchanged."""
    from scipy import stats as sps  # a config's check declares the family without importing scipy.stats

    counts = np.asarray(counts, dtype=float)
    ok = counts >= 2
    out = np.zeros(np.shape(counts))
    inside = counts[ok]
    distinct, which = np.unique(inside, return_inverse=True)
    t = sps.t.ppf(1.0 - alpha / 2.0, distinct - 1.0)[which]
    out[ok] = t * np.asarray(sd, dtype=float)[ok] / np.sqrt(inside)
    return out


@dataclass(frozen=True)
class NodeTable:
    """Per global node of a fitted forest (node id + the tree's offset): mean, sample std, count."""

    mean: np.ndarray
    sd: np.ndarray
    count: np.ndarray


def bootstrap_nodes(stats: LeafStatistics) -> NodeTable:
    """Each tree's own (bootstrap) sample: scikit-learn's value, impurity * n/(n-1), n draws."""
    means, variances, counts = [], [], []
    for est in stats.ensemble.trees:
        tree = est.tree_
        n = tree.weighted_n_node_samples.astype(float)
        means.append(tree.value[:, 0, 0])
        variances.append(np.where(n > 1, tree.impurity * n / np.maximum(n - 1.0, 1.0), 0.0))
        counts.append(n)
    var = np.maximum(np.concatenate(variances), 0.0)
    return NodeTable(np.concatenate(means), np.sqrt(var), np.concatenate(counts))


def train_nodes(stats: LeafStatistics) -> NodeTable:
    """All training rows the forest was fit on, per leaf: mean, sample std (ddof 1), count."""
    n = stats.counts.astype(float)
    sum_sq = np.asarray(stats.membership @ (stats.y**2)[:, None]).ravel()
    ss = np.maximum(sum_sq - n * stats.mean_y**2, 0.0)
    var = np.where(n > 1, ss / np.maximum(n - 1.0, 1.0), 0.0)
    return NodeTable(stats.mean_y, np.sqrt(var), n)


NODE_TABLES = {"bootstrap": bootstrap_nodes, "train": train_nodes}


_NODE_TABLES: weakref.WeakKeyDictionary[LeafStatistics, dict] = weakref.WeakKeyDictionary()


def node_table(rows: RowTensors, leaf_stats: str) -> NodeTable:
    """The node table of the rows' forest for one reading, built once per fitted forest."""
    cache = _NODE_TABLES.setdefault(rows.stats, {})
    if leaf_stats not in cache:
        cache[leaf_stats] = NODE_TABLES[leaf_stats](rows.stats)
    return cache[leaf_stats]


def node_half_widths(rows: RowTensors, leaf_stats: str, alpha: float) -> np.ndarray:
    """``half_widths`` of every node of the rows' forest for one reading and alpha, once per fitted
    forest: a row set's half-widths are these gathered at its leaves, the same numbers as the
    half-widths of its gathered counts and deviations (each is a function of its own node's)."""
    cache = _NODE_TABLES.setdefault(rows.stats, {})
    key = (leaf_stats, "half-widths", alpha)
    if key not in cache:
        table = node_table(rows, leaf_stats)
        cache[key] = half_widths(table.sd, table.count, alpha)
    return cache[key]


def pessimistic_costs(y: np.ndarray, z: np.ndarray, h: np.ndarray) -> np.ndarray:
    """c_l = sum_i (|y_i - z_il| + h_il) for tree predictions z (n, T) and half-widths h (n, T)."""
    return (np.abs(np.asarray(y, float)[:, None] - z) + h).sum(axis=0)


def scaled_costs(y: np.ndarray, z: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The costs divided by n and by std(y) (ddof 0; 1 when y is constant): dimensionless, so one
    lambda grid serves every dataset and training size."""
    y = np.asarray(y, float)
    spread = float(y.std()) or 1.0
    return pessimistic_costs(y, z, h) / (len(y) * spread)


def worst_end(y: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The paper's pessimistic choice, literally: the upper end when y is below the interval's
    midpoint (lower + upper) / 2 (the printed rule omits the /2), otherwise the lower end."""
    y = np.asarray(y, float)[:, None]
    return np.where(y < (lower + upper) / 2.0, upper, lower)


def weight_bounds(T: int, eps: float) -> tuple[float, float]:
    """(lower, upper) bound of every weight in W(eps)."""
    return (1.0 - eps) / T, 1.0


def closed_form_weights(c: np.ndarray, eps: float, lam: float, tol: float = 1e-14) -> np.ndarray:
    """argmin c.w + lam ||w||^2 over W(eps), lam > 0: w = clip((nu - c) / (2 lam), lo, 1) with nu
    found by bisection so that sum w = 1 (the KKT conditions; a reference for the solver layer)."""
    if lam <= 0:
        raise ValueError("the closed form needs lam > 0")
    c = np.asarray(c, float)
    lo, hi = weight_bounds(len(c), eps)

    def total(nu: float) -> float:
        return float(np.clip((nu - c) / (2 * lam), lo, hi).sum())

    a, b = c.min() + 2 * lam * lo - 1.0, c.max() + 2 * lam * hi + 1.0  # total(a) <= 1 <= total(b)
    while total(a) > 1.0:
        a -= b - a
    for _ in range(400):
        mid = 0.5 * (a + b)
        if total(mid) < 1.0:
            a = mid
        else:
            b = mid
        if b - a <= tol * max(1.0, abs(b)):
            break
    return np.clip((0.5 * (a + b) - c) / (2 * lam), lo, hi)


def weight_constraints(T: int, eps: float) -> LinearConstraints:
    """W(eps): (1-eps)/T <= w_l <= 1 and sum w = 1."""
    lo, hi = weight_bounds(T, eps)
    return ConstraintBuilder(T).simplex(slice(None)).bounds(slice(None), lo, hi).build()


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def weights_problem(c: np.ndarray, eps: float, lam: float) -> QuadraticProblem | LinearProblem:
    """min_w c.w + lam ||w||^2 over W(eps), as the shared solver layer takes it: a linear term plus
    a ridge (H = 2 lam I, f = c) when lam > 0, the LP c.w when lam = 0."""
    c = np.asarray(c, float)
    cons = weight_constraints(len(c), eps)
    if lam > 0:
        return QuadraticProblem(2.0 * lam * np.eye(len(c)), c, cons)
    return LinearProblem(c, cons)


ALPHA = Param(
    "alpha",
    DESIGN,
    0.05,
    0.0,
    1.0,
    low_open=True,
    high_open=True,
    doc="leaf intervals at confidence 1 - alpha (t quantile 1 - alpha/2)",
)
LAM = Param("lam", MIXING, 0.0, 0.0, None, doc="ridge lambda ||w||^2 on the tree weights (0: an LP)")


@dataclass(frozen=True)
class IntervalFeatures:
    """Per row set: tree predictions z (n, T) and their interval half-widths h (n, T); ``costs``
    keeps the scaled costs per training target vector (every mixing point of a grid poses its
    problem with the same costs)."""

    z: np.ndarray
    h: np.ndarray
    costs_by_target: dict = field(default_factory=dict, compare=False, repr=False)

    def costs(self, y: np.ndarray) -> np.ndarray:
        """``scaled_costs(y, z, h)``, computed once per distinct y (its layout and bytes), read-only."""
        y = np.asarray(y, float)
        key = (y.shape, y.strides, y.tobytes())
        if key not in self.costs_by_target:
            self.costs_by_target[key] = _read_only(scaled_costs(y, self.z, self.h))
        return self.costs_by_target[key]


class RobustRFFamily(Family):
    """Tree weights from pessimistic interval costs. Not of the residual form y ~ r + Phi theta:
    its training problem is a linear cost plus a ridge on w (``weights_problem``), solved by the
    shared solver layer as it is (the config's ``loss`` does not apply)."""

    name = "robust-rf"
    summary = "robust interval-weighted RF (Russian paper), leaf intervals from each tree's bootstrap sample"
    params = (ALPHA, EPS, LAM)
    leaf_stats = "bootstrap"

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> IntervalFeatures:
        alpha = float(design["alpha"])

        def build() -> IntervalFeatures:
            table = node_table(rows, self.leaf_stats)
            h = np.ascontiguousarray(node_half_widths(rows, self.leaf_stats, alpha)[rows.leaves])  # C order, as before
            return IntervalFeatures(table.mean[rows.leaves], h)

        return rows.memo(("robust-rf", self.leaf_stats, alpha), build)

    def costs(self, feats: IntervalFeatures, y: np.ndarray) -> np.ndarray:
        return feats.costs(y)

    def training_problem(
        self, feats: IntervalFeatures, y: np.ndarray, mixing: Mapping[str, float]
    ) -> QuadraticProblem | LinearProblem | None:
        if mixing["eps"] == 0.0:
            return None  # W(0) = {1/T}: the plain forest
        return weights_problem(self.costs(feats, y), mixing["eps"], mixing["lam"])

    def predict(self, feats: IntervalFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        return feats.z @ self.weights(feats, theta)

    def weights(self, feats: IntervalFeatures, theta: np.ndarray | None) -> np.ndarray:
        return uniform(feats.z.shape[1]) if theta is None else theta

    def fitted_attributes(self, feats, mixing, theta):
        return {"w_": self.weights(feats, theta)}


class RobustRFTrainFamily(RobustRFFamily):
    name = "robust-rf-train"
    summary = "robust interval-weighted RF, leaf means and intervals from all training rows in the leaf"
    leaf_stats = "train"


ROBUST_FAMILIES = {f.leaf_stats: f for f in (RobustRFFamily(), RobustRFTrainFamily())}
