"""Benchmark of one SAT-RF-y fold: the 5 x 5 eps x gamma grid on shared tensors vs rebuilt ones.

A fold of n training rows (Friedman 1, standardised) and n/2 validation rows, a RF of T trees fit
once. The shared path builds leaf statistics, A, B, the T x T self-attention and the features
once per row set and reuses them for all 25 grid points; the naive path rebuilds all of them at
every point. Both train and predict the same way; their predictions must agree.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.preprocessing import StandardScaler

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES
from afr_cli.solvers.solve import DEFAULT_SOLVER, clear_compiled_cache, solve

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
DESIGN = {"tau": 1.0, "kappa": 1.0}


def _point(family, train, val, y: np.ndarray, mixing: dict, solver: str) -> np.ndarray:
    """Train theta on the training features for one mixing point; validation predictions."""
    problem = family.training_problem(train, y, mixing)
    theta = None if problem is None else solve(problem, solver=solver).theta
    return family.predict(val, mixing, theta)


def run(n: int = 800, T: int = 100, seed: int = 0, solver: str = DEFAULT_SOLVER) -> dict:
    """Milliseconds of the shared and the naive grid over one fold, and their ratio."""
    X, y = make_friedman1(n + n // 2, noise=1.0, random_state=seed)
    X = StandardScaler().fit(X[:n]).transform(X)
    X_tr, y_tr, X_val = X[:n], y[:n], X[n:]
    forest = get_ensemble("rf").fit(X_tr, y_tr, seed, n_estimators=T)
    family = FAMILIES["sat-rf-y"]
    grid = [{"eps": e, "gamma": g} for e in GRID for g in GRID]

    clear_compiled_cache()
    t0 = time.perf_counter()
    stats = LeafStatistics(forest, X_tr, y_tr)
    train = family.features(stats.rows(), DESIGN)
    val = family.features(stats.rows(X_val), DESIGN)
    shared = [_point(family, train, val, y_tr, mixing, solver) for mixing in grid]
    shared_s = time.perf_counter() - t0

    clear_compiled_cache()
    t0 = time.perf_counter()
    naive = []
    for mixing in grid:
        fresh = LeafStatistics(forest, X_tr, y_tr)
        naive.append(
            _point(
                family,
                family.features(fresh.rows(), DESIGN),
                family.features(fresh.rows(X_val), DESIGN),
                y_tr,
                mixing,
                solver,
            )
        )
    naive_s = time.perf_counter() - t0

    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(shared, naive))
    return {
        "shared_ms": round(shared_s * 1000.0, 1),
        "naive_ms": round(naive_s * 1000.0, 1),
        "max_abs_diff": diff,
        "ratio": round(naive_s / shared_s, 2),
        "points": len(grid),
        "n": n,
        "T": T,
        "solver": solver,
    }
