"""Benchmark of Decision-Machine prediction: the matrices in batch (sparse matmul) against
scikit-learn's ``predict`` and a naive per-row loop over the same matrices, in the same run.

A RF of T trees (min_samples_leaf 10, all features per split) is fit to ``train`` Friedman 1 rows
and predicts n fresh rows. The batch path computes h = sgn(S x - t) and B h for chunks of rows
(one sparse product per chunk); the naive path does the same one row at a time. All three must
give the same predictions, bit for bit. Peak memory is tracemalloc's, per path (the naive path's
on its first 1000 rows: it holds one row at a time).

dm-soft's features (each tree's soft prediction, at tau = SOFT_TAU and WALK_TAUS) are timed both
ways in the same run: the matrices (``DecisionMachine`` built, then ``tree_predictions_soft``)
and the compiled walk of scikit-learn's trees (``dm.walk``: no machine; its kernels compiled
before the clock starts), which must give the same bytes; the ratio is matrices / walk, in CPU
seconds of this process (on a shared machine wall time counts the other processes too).
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
from sklearn.datasets import make_friedman1

from afr_cli.dm import DecisionMachine
from afr_cli.dm.hard import as_tested
from afr_cli.dm.walk import tree_predictions, walkable
from afr_cli.ensembles import get_ensemble

SOFT_TAU = 0.1
WALK_TAUS = (0.001, SOFT_TAU, 1.0)  # dm-soft's grid runs from 0.001 (most paths pruned) to 1


def naive_predict(dm: DecisionMachine, X: np.ndarray) -> np.ndarray:
    """Per row: h = sgn(S x - t), B h, the exit leaves where B_i h = ||B_i||^2, their values."""
    X = as_tested(X)
    B = dm.B.astype(np.float64).tocsr()
    norms = np.asarray(abs(dm.B).sum(axis=1)).ravel()
    features = dm.S.indices
    out = np.empty(len(X))
    for i, x in enumerate(X):
        h = np.where(x[features] - dm.t > 0, 1.0, -1.0)
        exits = np.flatnonzero(B @ h == norms)
        vals = dm.v[exits]
        out[i] = np.cumsum(vals)[-1] / dm.n_trees if dm.average_trees else dm.intercept + np.cumsum(vals)[-1]
    return out


def _timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def _cpu(fn):
    t0 = time.process_time()
    result = fn()
    return result, time.process_time() - t0


def _peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return round(peak / 2**20, 1)


def run(n: int = 100_000, T: int = 100, train: int = 2000, seed: int = 0) -> dict:
    """Milliseconds of each path, the ratios, peak memory and whether the predictions agree."""
    X, y = make_friedman1(train + n, noise=1.0, random_state=seed)
    Xtr, ytr, Xq = X[:train], y[:train], X[train:]
    forest = get_ensemble("rf").fit(Xtr, ytr, seed, n_estimators=T).model  # scikit-learn's RF
    dm, build_s = _timed(lambda: DecisionMachine.from_ensemble(forest))

    batch, batch_s = _timed(lambda: dm.predict(Xq))
    sk, sk_s = _timed(lambda: forest.predict(Xq))
    naive, naive_s = _timed(lambda: naive_predict(dm, Xq))
    _, soft_s = _timed(lambda: dm.predict_soft(Xq, SOFT_TAU))
    agree = bool(np.array_equal(batch, sk) and np.array_equal(naive, sk))
    if not agree:
        raise AssertionError("matrix, naive and scikit-learn predictions differ")
    walk = soft_walk(forest, Xq)
    sub = Xq[:1000]
    return {
        "n": n,
        "T": T,
        "train": train,
        "leaves": dm.n_leaves,
        "internal_nodes": dm.n_nodes,
        "B_nonzeros": int(dm.B.nnz),
        "build_ms": round(build_s * 1000, 1),
        "matrix_ms": round(batch_s * 1000, 1),
        "sklearn_ms": round(sk_s * 1000, 1),
        "naive_ms": round(naive_s * 1000, 1),
        "soft_ms": round(soft_s * 1000, 1),
        "soft_tau": SOFT_TAU,
        "naive_over_matrix": round(naive_s / batch_s, 2),
        "matrix_over_sklearn": round(batch_s / sk_s, 2),
        "peak_mb": {
            "matrix": _peak_mb(lambda: dm.predict(Xq)),
            "sklearn": _peak_mb(lambda: forest.predict(Xq)),
            "soft": _peak_mb(lambda: dm.predict_soft(Xq, SOFT_TAU)),
            "naive_first_1000_rows": _peak_mb(lambda: naive_predict(dm, sub)),
        },
        "agree": agree,
        "soft_walk": walk,
    }


def soft_walk(forest, X: np.ndarray) -> dict:
    """dm-soft's features by the matrices and by the compiled walk, per tau: CPU ms of each, their
    ratio (building the machine / the walked forest included), and whether the bytes agree."""
    T = len(forest.estimators_)
    scale = np.ones(T)  # dm-soft's scale for a forest
    tree_predictions(walkable(forest.estimators_[:1], scale[:1]), X[:2], SOFT_TAU)  # compiled (or loaded) first
    machine, machine_s = _cpu(lambda: DecisionMachine.from_ensemble(forest, weights=scale))
    walked, walked_s = _cpu(lambda: walkable(forest.estimators_, scale))
    out = {"machine_build_ms": round(machine_s * 1000, 1), "walk_build_ms": round(walked_s * 1000, 1), "taus": {}}
    for tau in WALK_TAUS:
        matrices, matrices_s = _cpu(lambda t=tau: machine.tree_predictions_soft(X, t))
        kernel, kernel_s = _cpu(lambda t=tau: tree_predictions(walked, X, t))
        if matrices.tobytes() != kernel.tobytes():
            raise AssertionError(f"dm-soft features at tau = {tau}: the walk and the matrices differ")
        out["taus"][str(tau)] = {
            "matrices_ms": round(matrices_s * 1000, 1),
            "walk_ms": round(kernel_s * 1000, 1),
            "matrices_over_walk": round((machine_s + matrices_s) / (walked_s + kernel_s), 2),
        }
    out["identical"] = True
    return out
