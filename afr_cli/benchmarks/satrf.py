"""Benchmark of one SAT-RF-y fold: the 5 x 5 eps x gamma grid on shared tensors vs rebuilt ones.

A fold of n training rows (Friedman 1, standardised) and n/2 validation rows, a RF of T trees fit
once. The shared path builds leaf statistics, A, B, the T x T self-attention and the features
once per row set and reuses them for all 25 grid points; the naive path rebuilds all of them at
every point. Both train and predict the same way; their predictions must agree.

The y chain of the fold's training rows (``attention_chain``) is also timed both ways in the same
run, for one head and for two (sat-rf-y2, equal kappas): the (rows, T, T) tensors block by block
and the compiled step (``satrf_kernels``, compiled before the clock starts); the bytes must agree
and the ratio is tensors / kernel in CPU seconds of this process.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.preprocessing import StandardScaler

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES
from afr_cli.models.satrf import CHAIN_BLOCK_ROWS, chain_block_y, chain_y, tensor_chain_block
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
    kernel = chain_kernel(stats.rows().values, stats.rows().keys)
    return {
        "shared_ms": round(shared_s * 1000.0, 1),
        "naive_ms": round(naive_s * 1000.0, 1),
        "max_abs_diff": diff,
        "ratio": round(naive_s / shared_s, 2),
        "points": len(grid),
        "n": n,
        "T": T,
        "solver": solver,
        "chain_kernel": kernel,
    }


def chain_kernel(values: np.ndarray, keys: np.ndarray) -> dict:
    """The y chain of a row set by the tensors (blocks of CHAIN_BLOCK_ROWS) and as ``attention_chain``
    now takes it (the compiled step), for one and two heads: CPU ms of each, their ratio, and
    whether the bytes agree."""
    starts = range(0, len(values), CHAIN_BLOCK_ROWS)
    chain_block_y(values[:2], (1.0,))  # compiled (or loaded from numba's cache) before the clock starts
    out = {}
    for heads, kappas in (("one_head", (1.0,)), ("two_heads", (1.0, 1.0))):
        t0 = time.process_time()
        blocks = [
            tensor_chain_block(values[a : a + CHAIN_BLOCK_ROWS], keys[a : a + CHAIN_BLOCK_ROWS], "y", kappas)
            for a in starts
        ]
        tensors = [np.concatenate([b[j] for b in blocks]) for j in range(len(kappas))]
        t1 = time.process_time()
        kernel = chain_y(values, keys, kappas)
        t2 = time.process_time()
        if any(x.tobytes() != y.tobytes() for x, y in zip(tensors, kernel)):
            raise AssertionError(f"the SAT-RF-y chain ({heads}): the compiled step and the tensors differ")
        out[heads] = {
            "tensors_ms": round((t1 - t0) * 1000, 1),
            "kernel_ms": round((t2 - t1) * 1000, 1),
            "tensors_over_kernel": round((t1 - t0) / max(t2 - t1, 1e-9), 2),
        }
    out["identical"] = True
    return out
