"""The one solver layer: fit theta in  y ~ r + Phi theta  under linear constraints (QP or LP).

Every model family reduces its training to a :class:`LinearAttentionProblem` (design.md
section 1). The squared loss is solved in Gram form: with the reduced QR factorisation
Phi = Q R, ||y - r - Phi theta||^2 = ||R theta - Q'(y - r)||^2 + const, a p x p problem
whose size does not depend on n. That problem is DPP-parametrised, compiled once per shape
and constraint structure, and re-solved with new parameter values. The L1 loss is an LP
(``sum |y - r - Phi theta|``), parametrised the same way per (n, p) shape.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular

from afr_cli.errors import SolverError

DEFAULT_SOLVER = "ECOS"
LOSSES = ("l2", "l1")
SOLVERS = ("ECOS", "CLARABEL", "OSQP", "SCS")
# Solvers tried, in order, after the requested one fails (OSQP handles QPs only).
_FALLBACKS = ("CLARABEL", "ECOS", "SCS")
# Only a converged solve is accepted: an "optimal_inaccurate" answer (e.g. OSQP stopping at its
# iteration limit) goes to the next solver, and the fallback is recorded.
_GOOD_STATUSES = (cp.OPTIMAL,)


@dataclass(frozen=True)
class LinearConstraints:
    """theta >= lower, theta <= upper (inf = none), eq_matrix @ theta == eq_rhs."""

    lower: np.ndarray
    upper: np.ndarray
    eq_matrix: np.ndarray
    eq_rhs: np.ndarray

    @property
    def size(self) -> int:
        return len(self.lower)

    def structure_key(self) -> str:
        """Identifies what must be compiled in: the equality matrix and which uppers are finite."""
        h = hashlib.sha1()
        h.update(np.ascontiguousarray(self.eq_matrix, dtype=float).tobytes())
        h.update(np.isfinite(self.upper).tobytes())
        h.update(str(self.eq_matrix.shape).encode())
        return h.hexdigest()

    def violation(self, theta: np.ndarray) -> float:
        """Largest violation of any constraint by theta (0 when feasible)."""
        parts = [np.max(self.lower - theta, initial=0.0)]
        finite = np.isfinite(self.upper)
        if finite.any():
            parts.append(np.max(theta[finite] - self.upper[finite], initial=0.0))
        if len(self.eq_rhs):
            parts.append(np.max(np.abs(self.eq_matrix @ theta - self.eq_rhs)))
        return float(max(parts))


class ConstraintBuilder:
    """Builds LinearConstraints block by block: simplices, linked sums, bounds."""

    def __init__(self, size: int):
        self.size = size
        self.lower = np.zeros(size)
        self.upper = np.full(size, np.inf)
        self._rows: list[np.ndarray] = []
        self._rhs: list[float] = []

    def simplex(self, block: slice | np.ndarray, total: float = 1.0) -> "ConstraintBuilder":
        """theta[block] >= 0 and sums to ``total``."""
        row = np.zeros(self.size)
        row[block] = 1.0
        self._rows.append(row)
        self._rhs.append(float(total))
        return self

    def linked_sum(self, block: slice | np.ndarray, target: int) -> "ConstraintBuilder":
        """sum(theta[block]) == theta[target] (e.g. sum_k gamma_k^(j) = eps_j)."""
        row = np.zeros(self.size)
        row[block] = 1.0
        row[target] -= 1.0
        self._rows.append(row)
        self._rhs.append(0.0)
        return self

    def bounds(self, index: int | slice | np.ndarray, lower: float, upper: float) -> "ConstraintBuilder":
        """lower <= theta[index] <= upper."""
        self.lower[index] = lower
        self.upper[index] = upper
        return self

    def build(self) -> LinearConstraints:
        eq = np.array(self._rows) if self._rows else np.zeros((0, self.size))
        return LinearConstraints(self.lower.copy(), self.upper.copy(), eq, np.array(self._rhs))


def simplex_constraints(size: int) -> LinearConstraints:
    """The unit simplex of dimension ``size`` (the constraint of every tree-weight vector)."""
    return ConstraintBuilder(size).simplex(slice(None)).build()


@dataclass(frozen=True)
class LinearAttentionProblem:
    """min over theta of loss(y - r - Phi theta) under ``constraints``; loss is l2 or l1."""

    y: np.ndarray
    r: np.ndarray
    Phi: np.ndarray
    constraints: LinearConstraints

    def residual(self, theta: np.ndarray) -> np.ndarray:
        return self.y - self.r - self.Phi @ theta

    def objective(self, theta: np.ndarray, loss: str) -> float:
        """The training loss at theta, computed on the original n rows."""
        res = self.residual(theta)
        return float(res @ res) if loss == "l2" else float(np.abs(res).sum())


@dataclass
class SolveResult:
    """The weights and what it took to get them: solver, status, objective, time, attempts."""

    theta: np.ndarray
    solver: str
    status: str
    objective: float
    seconds: float
    attempts: list[dict] = field(default_factory=list)

    @property
    def fell_back(self) -> bool:
        return len(self.attempts) > 1


class _CompiledQP:
    """min ||R theta - z||^2 over the constraints, R upper triangular; R, z, bounds are parameters.

    Only the p(p+1)/2 entries of the upper triangle are parameters, so the compiled problem
    keeps R's sparsity (a dense p x p parameter makes ECOS about twice as slow).
    """

    def __init__(self, constraints: LinearConstraints):
        p = constraints.size
        self.upper_index = np.triu_indices(p)
        k = len(self.upper_index[0])
        placement = sp.csc_matrix(
            (np.ones(k), (self.upper_index[0] * p + self.upper_index[1], np.arange(k))), shape=(p * p, k))
        self.theta = cp.Variable(p)
        self.R_upper = cp.Parameter(k)
        self.z = cp.Parameter(p)
        R = cp.reshape(placement @ self.R_upper, (p, p), order="C")
        cons, self.lower, self.upper, self.rhs, self.finite = _bound_constraints(self.theta, constraints)
        self.problem = cp.Problem(cp.Minimize(cp.sum_squares(R @ self.theta - self.z)), cons)

    def set_values(self, problem: LinearAttentionProblem) -> None:
        R, z = gram_factor(problem.Phi, problem.y - problem.r)
        scale = max(np.abs(R).max(initial=0.0), np.abs(z).max(initial=0.0), 1e-12)
        self.R_upper.value, self.z.value = R[self.upper_index] / scale, z / scale
        _set_bounds(self, problem.constraints)


class _CompiledLP:
    """min sum |Phi theta - t| over the constraints, with Phi, t, bounds and rhs as parameters."""

    def __init__(self, n: int, constraints: LinearConstraints):
        p = constraints.size
        self.theta = cp.Variable(p)
        self.Phi = cp.Parameter((n, p))
        self.t = cp.Parameter(n)
        cons, self.lower, self.upper, self.rhs, self.finite = _bound_constraints(self.theta, constraints)
        self.problem = cp.Problem(cp.Minimize(cp.norm1(self.Phi @ self.theta - self.t)), cons)

    def set_values(self, problem: LinearAttentionProblem) -> None:
        t = problem.y - problem.r
        scale = max(np.abs(problem.Phi).max(initial=0.0), np.abs(t).max(initial=0.0), 1e-12)
        self.Phi.value, self.t.value = problem.Phi / scale, t / scale
        _set_bounds(self, problem.constraints)


def _bound_constraints(theta: cp.Variable, constraints: LinearConstraints):
    """cvxpy constraints with the bounds and equality right-hand side as parameters."""
    p = constraints.size
    lower = cp.Parameter(p)
    finite = np.flatnonzero(np.isfinite(constraints.upper))
    upper = cp.Parameter(len(finite)) if len(finite) else None
    rhs = cp.Parameter(len(constraints.eq_rhs)) if len(constraints.eq_rhs) else None
    cons = [theta >= lower]
    if upper is not None:
        cons.append(theta[finite] <= upper)
    if rhs is not None:
        cons.append(constraints.eq_matrix @ theta == rhs)
    return cons, lower, upper, rhs, finite


def _set_bounds(compiled, constraints: LinearConstraints) -> None:
    compiled.lower.value = constraints.lower
    if compiled.upper is not None:
        compiled.upper.value = constraints.upper[compiled.finite]
    if compiled.rhs is not None:
        compiled.rhs.value = constraints.eq_rhs


GRAM_JITTER = 1e-10


def gram_factor(Phi: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper-triangular R (p x p) and z with ||Phi theta - target||^2 ~ ||R theta - z||^2 + const.

    R'R = Phi'Phi + delta I (Cholesky), delta = GRAM_JITTER * mean(diag): a ridge far below
    the solvers' tolerances that keeps rank-deficient designs (n < p, equal trees) factorable.
    """
    G = Phi.T @ Phi
    c = Phi.T @ target
    p = G.shape[0]
    delta = GRAM_JITTER * max(np.trace(G) / max(p, 1), 1e-300)
    L = np.linalg.cholesky(G + delta * np.eye(p))
    z = solve_triangular(L, c, lower=True, check_finite=False)
    return L.T, z


# Compiled problems of this process, keyed by (loss, shape, constraint structure, solver).
_COMPILED: dict[tuple, object] = {}


def _compiled_for(problem: LinearAttentionProblem, loss: str, solver: str):
    c = problem.constraints
    n, p = problem.Phi.shape
    key = (loss, p, n if loss == "l1" else None, c.structure_key(), solver)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _CompiledQP(c) if loss == "l2" else _CompiledLP(n, c)
        _COMPILED[key] = compiled
    return compiled


def clear_compiled_cache() -> None:
    """Forget every compiled problem (benchmarks use it to time a cold start)."""
    _COMPILED.clear()


def solve(problem: LinearAttentionProblem, loss: str = "l2", solver: str = DEFAULT_SOLVER,
          fallbacks: tuple[str, ...] = _FALLBACKS) -> SolveResult:
    """Solve ``problem``; on failure try the fallbacks in order and record each attempt.

    Raises SolverError when every solver fails: callers never get silent default weights.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    order = [solver] + [s for s in fallbacks if s != solver and not (loss == "l1" and s == "OSQP")]
    attempts: list[dict] = []
    start = time.perf_counter()
    for name in order:
        t0 = time.perf_counter()
        status, theta = _try_solver(problem, loss, name)
        attempts.append({"solver": name, "status": status, "seconds": time.perf_counter() - t0})
        if theta is not None:
            theta = np.clip(theta, problem.constraints.lower, problem.constraints.upper)
            return SolveResult(theta, name, status, problem.objective(theta, loss),
                               time.perf_counter() - start, attempts)
    tried = ", ".join(f"{a['solver']}: {a['status']}" for a in attempts)
    raise SolverError(f"no solver could fit the attention weights ({tried})")


def _try_solver(problem: LinearAttentionProblem, loss: str, solver: str) -> tuple[str, np.ndarray | None]:
    """Run one solver on the compiled problem; (status, theta or None when it failed)."""
    try:
        compiled = _compiled_for(problem, loss, solver)
        compiled.set_values(problem)
        with warnings.catch_warnings():  # the status says it; the attempt is recorded
            warnings.simplefilter("ignore", UserWarning)
            compiled.problem.solve(solver=solver, **_solver_options(solver))
    except (cp.error.SolverError, ValueError, ArithmeticError) as err:
        return f"error: {type(err).__name__}", None
    status = compiled.problem.status
    theta = compiled.theta.value
    if status not in _GOOD_STATUSES or theta is None or not np.all(np.isfinite(theta)):
        return str(status), None
    if problem.constraints.violation(theta) > 1e-4:
        return f"{status} (infeasible point)", None
    return str(status), np.array(theta, dtype=float)


def _solver_options(solver: str) -> dict:
    """Tolerances that make every solver accurate enough for weights compared to 1e-6."""
    if solver == "OSQP":
        return {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iter": 20000, "polishing": True}
    if solver == "SCS":
        return {"eps": 1e-7, "max_iters": 20000}
    return {}
