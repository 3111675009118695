"""Identical problems solved once per unit: a memo keyed by the problem's bytes.

A unit solves many problems, and some are the same problem exactly (SAT-RF's grid: 29 % of its
solves); units computed together (the robust RF's clean and noisy units of a split) share every
training problem. The memo keys a problem by a hash of everything that determines its solution:
the problem's form, every array (dtype, shape and bytes), its constraints, the loss and the
solver asked for. A hit returns the stored solution, so the result is the bytes a second solve
would give only when solving is a pure function of the problem: a result is kept only when every
solver it tried is stateless (DAQP, PIQP, ProxQP, HiGHS, CLARABEL, ECOS). OSQP and SCS warm-start
from their previous solve through cvxpy's compiled problem, so skipping one of their solves could
move a later one: their results are never memoised, nor are failures (which tried SCS).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from afr_cli.solve import DEFAULT_SOLVER, SolveResult, solve
from afr_cli.solvers.problems import LinearAttentionProblem, LinearProblem, Problem, QuadraticProblem

# Backends whose answer depends only on the problem they are given (no state between solves).
STATELESS = frozenset({"DAQP", "PIQP", "PROXQP", "HIGHS", "CLARABEL", "ECOS"})


def _arrays(problem: Problem) -> list:
    if isinstance(problem, LinearAttentionProblem):
        own = [problem.y, problem.r, problem.Phi]
    elif isinstance(problem, QuadraticProblem):
        own = [problem.H, problem.f]
    elif isinstance(problem, LinearProblem):
        own = [problem.c]
    else:
        raise TypeError(f"not a solver-layer problem: {type(problem).__name__}")
    c = problem.constraints
    return own + [c.lower, c.upper, c.eq_matrix, c.eq_rhs]


def problem_key(problem: Problem, loss: str, solver: str) -> bytes:
    """A digest of everything that determines the problem's solution (two problems with the same
    key have the same bytes in every array; -0.0 and 0.0 differ, which only costs a miss)."""
    h = hashlib.sha1(f"{type(problem).__name__}|{loss}|{solver.upper()}".encode())  # the fastest here
    for array in _arrays(problem):
        a = np.asarray(array)
        h.update(f"|{a.dtype.str}{a.shape}|".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


class SolveMemo:
    """``solve`` with identical problems solved once (``enabled=False``: every problem solved,
    today's path). ``solves`` and ``hits`` count what it did."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._results: dict[bytes, SolveResult] = {}
        self.solves = 0
        self.hits = 0

    def solve(self, problem: Problem, loss: str = "l2", solver: str = DEFAULT_SOLVER) -> tuple[SolveResult, bool]:
        """(the result, whether it came from the memo). A hit is the stored result with its own
        copy of theta and 0 seconds (no time was spent); SolverError as ``solve`` raises it."""
        if not self.enabled:
            self.solves += 1
            return solve(problem, loss=loss, solver=solver), False
        key = problem_key(problem, loss, solver)
        stored = self._results.get(key)
        if stored is not None:
            self.hits += 1
            return replace(stored, theta=stored.theta.copy(), seconds=0.0), True
        self.solves += 1
        result = solve(problem, loss=loss, solver=solver)
        if all(a["solver"] in STATELESS for a in result.attempts):
            self._results[key] = replace(result, theta=result.theta.copy())
        return result, False
