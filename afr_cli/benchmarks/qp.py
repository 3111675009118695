"""Benchmark of the solver layer on the real shapes (``benchmarks/shapes.py``): every solver's
median time and its objective gap to ECOS at tight tolerance, AUTO among them.

Three comparisons in the same run: each shape's solvers against the tight ECOS reference
(CLARABEL at tight tolerance stands in, and says so, where ECOS reports an inaccurate answer);
the naive path (a fresh n-form cvxpy + ECOS problem, what a loop would build) against AUTO on
the first shape; and AUTO cold against AUTO warm-started from the previous grid point along an
eps x gamma sweep (SAT-RF-y), to decide whether warm starts pay.
"""

from __future__ import annotations

import time
from dataclasses import replace

import cvxpy as cp
import numpy as np

from afr_cli.benchmarks.shapes import SHAPES, Shape, build, training_rows
from afr_cli.errors import SolverError
from afr_cli.solvers.cvxpy_backend import solve_cvxpy
from afr_cli.solvers.solve import LinearAttentionProblem, clear_compiled_cache, kind_of, solve

QP_SOLVERS = ("AUTO", "DAQP", "PIQP", "PROXQP", "ECOS", "CLARABEL", "OSQP", "SCS")
LP_SOLVERS = ("AUTO", "HIGHS", "ECOS", "CLARABEL", "SCS")
SLOW_SECONDS = 5.0  # a solver slower than this on its first solve is not repeated


def _timed(fn, repeats: int) -> tuple[object, float]:
    """(first result, median ms over ``repeats``); a slow first call is not repeated."""
    times, first = [], None
    for k in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
        first = out if k == 0 else first
        if times[0] > SLOW_SECONDS * 1000:
            break
    return first, float(np.median(times))


def reference(problem, loss: str) -> tuple[str, float]:
    """(name, objective) of the tight-tolerance reference: ECOS, or CLARABEL when ECOS is inaccurate."""
    kind = kind_of(problem, loss)
    for name in ("ECOS", "CLARABEL"):
        status, theta = solve_cvxpy(problem, kind, name, tight=True)
        if theta is not None:
            return f"{name} (tight)", problem.objective(problem.constraints.cleaned(theta), loss)
    raise SolverError(f"no tight reference for this problem ({status})")


def shape_row(problem, loss: str, repeats: int) -> dict:
    """Every solver's ms, status and relative objective gap to the reference on one problem."""
    ref_name, ref = reference(problem, loss)
    row = {"reference": ref_name, "weights": problem.constraints.size}
    for name in QP_SOLVERS if loss == "l2" else LP_SOLVERS:
        try:
            solve(problem, loss=loss, solver=name, fallbacks=())  # compile / import outside the timing
            res, ms = _timed(lambda: solve(problem, loss=loss, solver=name, fallbacks=()), repeats)
            row[name] = {
                "ms": round(ms, 3),
                "gap": (res.objective - ref) / max(abs(ref), 1e-300),
                "status": f"{res.solver}:{res.status}",
            }
        except (SolverError, ImportError) as err:
            row[name] = {"ms": None, "gap": None, "status": f"failed: {err}"}
    return row


def fresh_solve(problem: LinearAttentionProblem) -> float:
    """The naive path's objective: build and solve a new n-form cvxpy problem with ECOS (data scaled
    to a largest entry of 1: unscaled, ECOS calls Diabetes's problem infeasible)."""
    c = problem.constraints
    t = problem.y - problem.r
    scale = max(np.abs(problem.Phi).max(), np.abs(t).max())
    w = cp.Variable(c.size)
    cons = [w >= c.lower] + ([c.eq_matrix @ w == c.eq_rhs] if len(c.eq_rhs) else [])
    cp.Problem(cp.Minimize(cp.sum_squares((t - problem.Phi @ w) / scale)), cons).solve(solver="ECOS")
    return problem.objective(c.cleaned(np.asarray(w.value)), "l2")


def naive_vs_auto(problem: LinearAttentionProblem, repeats: int) -> dict:
    fresh_obj, fresh_ms = _timed(lambda: fresh_solve(problem), repeats)
    auto, auto_ms = _timed(lambda: solve(problem), repeats)
    return {
        "fresh_ms": round(fresh_ms, 3),
        "auto_ms": round(auto_ms, 3),
        "ratio": fresh_ms / auto_ms,
        "objective_gap": (auto.objective - fresh_obj) / max(abs(fresh_obj), 1e-300),
    }


def warm_start(X, y, shape: Shape, sweep: list[dict], repeats: int, seed: int = 0) -> dict:
    """The sweep's solves with AUTO, cold and warm-started from the previous point: ms and largest gap."""
    problems = [build(shape, X, y, seed, mixing) for mixing in sweep]

    def cold():
        return [solve(p) for p in problems]

    def warm():
        out, prev = [], None
        for p in problems:
            out.append(solve(p, warm=prev))
            prev = out[-1].theta
        return out

    c, cold_ms = _timed(cold, repeats)
    w, warm_ms = _timed(warm, repeats)
    gap = max(abs(a.objective - b.objective) / max(abs(a.objective), 1e-300) for a, b in zip(c, w))
    return {
        "shape": shape.name,
        "points": len(problems),
        "cold_ms": round(cold_ms, 3),
        "warm_ms": round(warm_ms, 3),
        "ratio": cold_ms / warm_ms,
        "max_gap": gap,
    }


def run(dataset: str = "Airfoil", trees: int = 100, n: int | None = None, repeats: int = 3, seed: int = 0) -> dict:
    """The benchmark: per shape and solver {"ms", "gap", "status"}, the naive ratio, the warm-start verdict."""
    clear_compiled_cache()
    X, y = training_rows(dataset, seed)
    if n is not None:
        X, y = X[:n], y[:n]
    scaled = [replace(s, trees=max(1, s.trees * trees // 100)) for s in SHAPES]
    shapes = {}
    for shape in scaled:
        shapes[shape.name] = shape_row(build(shape, X, y, seed), shape.loss, repeats)
    sweep = [{"eps": e, "gamma": g} for e in (0.25, 0.5, 0.75, 1.0) for g in (0.25, 0.5, 0.75, 1.0)]
    return {
        "dataset": dataset,
        "n": len(y),
        "trees": trees,
        "repeats": repeats,
        "shapes": shapes,
        "naive": naive_vs_auto(build(scaled[0], X, y, seed), repeats),
        "warm_start": warm_start(X, y, scaled[1], sweep, repeats, seed),
    }
