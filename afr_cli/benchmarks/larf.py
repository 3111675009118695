"""Benchmark of one LARF fold: the full (tau0 x M x variant) grid on shared features.

A fold of n training rows (Friedman 1, standardised) and n/2 validation rows, a RF of T trees.
The grid computes each first level once per (row set, tau0), each head sum once per tau_j, then
solves and scores every grid point. The naive first level (a Python loop over rows and trees,
as a straightforward port would do) is timed in the same run for every tau0 and checked
against the vectorised one. ARF variants do not depend on tau0: they are solved once per M.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from collections.abc import Iterable

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models.larf import LARF_FAMILIES, mixture_features
from afr_cli.models.larf_leaf import leaf_attention
from afr_cli.solvers.solve import DEFAULT_SOLVER, clear_compiled_cache, solve

TAU0S = (0.01, 0.1, 1.0, 10.0, 100.0)
VARIANTS = ("em-w-arf", "em-w-larf", "em-arf", "em-larf")
MIXING = {"eps": 0.5, "varsigma": 1e-3}  # eps is used by w- variants only


def naive_first_level(stats: LeafStatistics, X: np.ndarray, tau0: float) -> tuple[np.ndarray, np.ndarray]:
    """Values B (n, T) and ||x - A_k(x)||^2 (n, T) by a loop over rows and trees."""
    leaves = stats.leaf_ids(X)
    values, sqdist = np.empty(leaves.shape), np.empty(leaves.shape)
    for i, x in enumerate(X):
        for k, leaf in enumerate(leaves[i]):
            members = stats.members(leaf)
            d = ((stats.X[members] - x) ** 2).sum(axis=1)
            mu = np.exp(-(d - d.min()) / tau0)
            mu /= mu.sum()
            key = mu @ stats.X[members]
            values[i, k], sqdist[i, k] = mu @ stats.y[members], ((x - key) ** 2).sum()
    return values, sqdist


def _fold(n: int, T: int, seed: int) -> tuple[LeafStatistics, np.ndarray, np.ndarray]:
    X, y = make_friedman1(n + n // 2, noise=1.0, random_state=seed)
    scaler = StandardScaler().fit(X[:n])
    X = scaler.transform(X)
    stats = LeafStatistics(get_ensemble("rf").fit(X[:n], y[:n], seed, n_estimators=T), X[:n], y[:n])
    return stats, X[n:], y[n:]


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)


def run(
    n: int = 800,
    T: int = 100,
    seed: int = 0,
    solver: str = DEFAULT_SOLVER,
    tau0s: Iterable[float] = TAU0S,
    Ms: Iterable[int] = range(1, 21),
    variants: Iterable[str] = VARIANTS,
) -> dict:
    """Times of the shared grid and of the naive vs vectorised first level, peak memory, solves."""
    tau0s, Ms, variants = tuple(float(t) for t in tau0s), tuple(int(m) for m in Ms), tuple(variants)
    stats, X_val, y_val = _fold(n, T, seed)
    row_sets = (None, X_val)

    t0 = time.perf_counter()
    naive = {tau0: [naive_first_level(stats, stats.X if X is None else X, tau0) for X in row_sets] for tau0 in tau0s}
    naive_s = time.perf_counter() - t0

    clear_compiled_cache()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    train, val = stats.rows(), stats.rows(X_val)
    for tau0 in tau0s:
        leaf_attention(train, tau0), leaf_attention(val, tau0)
    vectorised_s = time.perf_counter() - t0
    solves, fallbacks, solve_s, best = 0, 0, 0.0, {}
    for variant in variants:
        family = LARF_FAMILIES[variant]
        for M in Ms:
            for tau0 in tau0s if family.leaf else (None,):
                tr, va = mixture_features(train, tau0, M), mixture_features(val, tau0, M)
                result = solve(family.training_problem(tr, stats.y, MIXING), solver=solver)
                solves, fallbacks, solve_s = solves + 1, fallbacks + result.fell_back, solve_s + result.seconds
                r2 = r2_score(y_val, family.predict(va, MIXING, result.theta))
                if r2 > best.get(variant, {}).get("r2", -np.inf):
                    best[variant] = {"M": M, "tau0": tau0, "r2": round(float(r2), 4)}
    shared_s = time.perf_counter() - t0
    rss_delta_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024.0

    mismatch = max(
        float(np.max(np.abs(a - b)))
        for tau0 in tau0s
        for rows, pair in zip((train, val), naive[tau0])
        for a, b in zip((leaf_attention(rows, tau0).values, leaf_attention(rows, tau0).key_sqdist), pair)
    )

    tracemalloc.start()
    fresh_train, fresh_val = stats.rows(), stats.rows(X_val)
    for tau0 in tau0s:
        leaf_attention(fresh_train, tau0), leaf_attention(fresh_val, tau0)
    peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    return {
        "n_train": n,
        "n_val": n // 2,
        "T": T,
        "solver": solver,
        "tau0s": list(tau0s),
        "Ms": [Ms[0], Ms[-1]],
        "variants": list(variants),
        "grid_points": len(tau0s) * len(Ms) * len(variants),
        "qp_solves": solves,
        "fallbacks": fallbacks,
        "shared_ms": _ms(shared_s),
        "solver_ms": _ms(solve_s),
        "naive_first_level_ms": _ms(naive_s),
        "vectorised_first_level_ms": _ms(vectorised_s),
        "ratio_first_level": round(naive_s / vectorised_s, 1),
        "first_level_max_abs_diff": mismatch,
        "peak_mb": round(peak_mb, 1),
        "maxrss_delta_mb": round(rss_delta_mb, 1),
        "best_val_r2": best,
    }
