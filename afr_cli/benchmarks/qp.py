"""Benchmark of the solver layer: a fresh n-form cvxpy problem against the compiled Gram form.

The problem is the one every model solves most: simplex-constrained least squares on the tree
values of a fitted forest (T = 100 trees, n = 800 rows, min_samples_leaf 10). Both paths are
timed in the same run; the compiled path is also timed with each available solver and its
objective compared with ECOS's.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
from sklearn.datasets import make_friedman1

from afr_cli.ensembles import get_ensemble
from afr_cli.forests import LeafStatistics
from afr_cli.solve import LinearAttentionProblem, clear_compiled_cache, simplex_constraints, solve

COMPARED_SOLVERS = ("ECOS", "CLARABEL", "OSQP")


def forest_problem(n: int = 800, T: int = 100, seed: int = 0) -> LinearAttentionProblem:
    """min ||y - B w||^2 over the simplex, B = leaf means of a RF fit to Friedman 1 data."""
    X, y = make_friedman1(n_samples=n, noise=1.0, random_state=seed)
    forest = get_ensemble("rf").fit(X, y, seed, n_estimators=T)
    B = LeafStatistics(forest, X, y).rows().values
    return LinearAttentionProblem(y, np.zeros(n), B, simplex_constraints(T))


def fresh_solve(problem: LinearAttentionProblem, solver: str = "ECOS") -> tuple[np.ndarray, float]:
    """The naive path: build and solve a new n-form cvxpy problem (what a loop would do)."""
    w = cp.Variable(problem.Phi.shape[1])
    objective = cp.Minimize(cp.sum_squares(problem.y - problem.r - problem.Phi @ w))
    prob = cp.Problem(objective, [w >= 0, cp.sum(w) == 1])
    prob.solve(solver=solver)
    return np.asarray(w.value), problem.objective(np.asarray(w.value), "l2")


def _median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return float(np.median(times))


def run(n: int = 800, T: int = 100, repeats: int = 5, seed: int = 0) -> dict:
    """Times (median ms) of both paths, their ratio, and every solver on the compiled path."""
    problem = forest_problem(n, T, seed)
    _, fresh_obj = fresh_solve(problem)
    fresh_ms = _median_ms(lambda: fresh_solve(problem), repeats)
    solvers = {}
    for name in COMPARED_SOLVERS:
        clear_compiled_cache()
        t0 = time.perf_counter()
        first = solve(problem, solver=name, fallbacks=())
        compile_ms = (time.perf_counter() - t0) * 1000
        ms = _median_ms(lambda: solve(problem, solver=name, fallbacks=()), repeats)
        solvers[name] = {"compiled_ms": round(ms, 3), "first_solve_ms": round(compile_ms, 1),
                         "status": first.status, "objective": first.objective}
    ecos_obj = solvers["ECOS"]["objective"]
    for entry in solvers.values():
        entry["objective_gap_to_ecos"] = (entry["objective"] - ecos_obj) / max(abs(ecos_obj), 1e-12)
    compiled_ms = solvers["ECOS"]["compiled_ms"]
    return {"fresh_ms": round(fresh_ms, 3), "compiled_ms": compiled_ms,
            "ratio": round(fresh_ms / compiled_ms, 2), "fresh_solver": "ECOS",
            "compiled_solver": "ECOS", "fresh_objective": fresh_obj,
            "n": n, "T": T, "repeats": repeats, "solvers": solvers}
