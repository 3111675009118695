"""The cvxpy backends (ECOS, CLARABEL, OSQP, SCS): DPP-parametrised problems compiled once per
shape and constraint structure, re-solved with new parameter values.

Quadratic problems are solved in Gram form: with H + delta I = R'R (Cholesky),
1/2 theta'H theta + f'theta = 1/2 ||R theta - z||^2 + const, z = -R^{-T} f, a p x p problem
whose size does not depend on n. The L1 residual loss is an LP over the n rows
(``sum |y - r - Phi theta|``); a ``LinearProblem`` is min c'theta.

cvxpy itself is imported where a problem is compiled or solved, not with this module: the
solver layer is imported by every config's check (``afr validate``), which solves nothing.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular

from afr_cli.solvers.problems import LinearAttentionProblem, LinearConstraints, LinearProblem, QuadraticProblem

if TYPE_CHECKING:
    import cvxpy as cp

CVXPY_SOLVERS = ("ECOS", "CLARABEL", "OSQP", "SCS")
GRAM_JITTER = 1e-10


def hessian_factor(H: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper-triangular R and z with 1/2 t'Ht + f't = 1/2 ||R t - z||^2 + const (up to the jitter).

    R'R = H + delta I, delta = GRAM_JITTER * mean(diag H): a ridge far below the solvers'
    tolerances that keeps rank-deficient problems (n < p, equal trees, a pure LP) factorable."""
    p = H.shape[0]
    delta = GRAM_JITTER * max(np.trace(H) / max(p, 1), 1e-300)
    L = np.linalg.cholesky(H + delta * np.eye(p))
    z = solve_triangular(L, -f, lower=True, check_finite=False)
    return L.T, z


def gram_factor(Phi: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R (p x p) and z with ||Phi theta - target||^2 ~ ||R theta - z||^2 + const (R'R = Phi'Phi + delta I)."""
    return hessian_factor(Phi.T @ Phi, -(Phi.T @ target))


class _CompiledQP:
    """min ||R theta - z||^2 over the constraints, R upper triangular; R, z, bounds are parameters.

    Only the p(p+1)/2 entries of the upper triangle are parameters, so the compiled problem
    keeps R's sparsity (a dense p x p parameter makes ECOS about twice as slow).
    """

    def __init__(self, constraints: LinearConstraints):
        import cvxpy as cp

        p = constraints.size
        self.upper_index = np.triu_indices(p)
        k = len(self.upper_index[0])
        placement = sp.csc_matrix(
            (np.ones(k), (self.upper_index[0] * p + self.upper_index[1], np.arange(k))), shape=(p * p, k)
        )
        self.theta = cp.Variable(p)
        self.R_upper = cp.Parameter(k)
        self.z = cp.Parameter(p)
        R = cp.reshape(placement @ self.R_upper, (p, p), order="C")
        cons, self.lower, self.upper, self.rhs, self.finite = _bound_constraints(self.theta, constraints)
        self.problem = cp.Problem(cp.Minimize(cp.sum_squares(R @ self.theta - self.z)), cons)

    def set_values(self, problem: LinearAttentionProblem | QuadraticProblem) -> None:
        if isinstance(problem, QuadraticProblem):
            R, z = hessian_factor(problem.H, problem.f)
        else:
            R, z = gram_factor(problem.Phi, problem.target)
        scale = max(np.abs(R).max(initial=0.0), np.abs(z).max(initial=0.0), 1e-12)
        self.R_upper.value, self.z.value = R[self.upper_index] / scale, z / scale
        _set_bounds(self, problem.constraints)


class _CompiledL1:
    """min sum |Phi theta - t| over the constraints, with Phi, t, bounds and rhs as parameters."""

    def __init__(self, n: int, constraints: LinearConstraints):
        import cvxpy as cp

        p = constraints.size
        self.theta = cp.Variable(p)
        self.Phi = cp.Parameter((n, p))
        self.t = cp.Parameter(n)
        cons, self.lower, self.upper, self.rhs, self.finite = _bound_constraints(self.theta, constraints)
        self.problem = cp.Problem(cp.Minimize(cp.norm1(self.Phi @ self.theta - self.t)), cons)

    def set_values(self, problem: LinearAttentionProblem) -> None:
        t = problem.target
        scale = max(np.abs(problem.Phi).max(initial=0.0), np.abs(t).max(initial=0.0), 1e-12)
        self.Phi.value, self.t.value = problem.Phi / scale, t / scale
        _set_bounds(self, problem.constraints)


class _CompiledLinear:
    """min c'theta over the constraints, with c, bounds and rhs as parameters."""

    def __init__(self, constraints: LinearConstraints):
        import cvxpy as cp

        self.theta = cp.Variable(constraints.size)
        self.c = cp.Parameter(constraints.size)
        cons, self.lower, self.upper, self.rhs, self.finite = _bound_constraints(self.theta, constraints)
        self.problem = cp.Problem(cp.Minimize(self.c @ self.theta), cons)

    def set_values(self, problem: LinearProblem) -> None:
        self.c.value = problem.c / max(np.abs(problem.c).max(initial=0.0), 1e-12)
        _set_bounds(self, problem.constraints)


def _bound_constraints(theta: cp.Variable, constraints: LinearConstraints):
    """cvxpy constraints with the bounds and equality right-hand side as parameters."""
    import cvxpy as cp

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
    compiled.lower.value = np.maximum(constraints.lower, -1e20)
    if compiled.upper is not None:
        compiled.upper.value = constraints.upper[compiled.finite]
    if compiled.rhs is not None:
        compiled.rhs.value = constraints.eq_rhs


# Compiled problems of this process, keyed by (form, shape, constraint structure, solver).
_COMPILED: dict[tuple, object] = {}


def _compiled_for(problem, kind: str, solver: str):
    c = problem.constraints
    if isinstance(problem, LinearProblem):
        form, n = "linear", None
    elif kind == "qp":
        form, n = "qp", None
    else:
        form, n = "l1", problem.Phi.shape[0]
    key = (form, c.size, n, c.structure_key(), solver)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = {
            "linear": lambda: _CompiledLinear(c),
            "qp": lambda: _CompiledQP(c),
            "l1": lambda: _CompiledL1(n, c),
        }[form]()
        _COMPILED[key] = compiled
    return compiled


def clear_compiled_cache() -> None:
    """Forget every compiled problem (benchmarks use it to time a cold start)."""
    _COMPILED.clear()


def solve_cvxpy(problem, kind: str, solver: str, tight: bool = False) -> tuple[str, np.ndarray | None]:
    """Run one cvxpy solver on the compiled problem; (status, theta or None when it failed).
    ``tight``: the benchmark's reference tolerances (1e-10) instead of the solver's defaults.

    Every solve starts cold (``warm_start=False``). cvxpy's default keeps each compiled problem's
    solver and updates it in place: OSQP and SCS then start from the previous solution, and even
    CLARABEL's answer moves in the last bits. An answer would depend on what the process solved
    before it, so on the unit order and the number of workers."""
    import cvxpy as cp

    try:
        compiled = _compiled_for(problem, kind, solver)
        compiled.set_values(problem)
        with warnings.catch_warnings():  # the status says it; the attempt is recorded
            warnings.simplefilter("ignore", UserWarning)
            compiled.problem.solve(solver=solver, warm_start=False, **solver_options(solver, tight))
    except (cp.error.SolverError, ValueError, ArithmeticError, np.linalg.LinAlgError) as err:
        return f"error: {type(err).__name__}", None
    status = compiled.problem.status
    theta = compiled.theta.value
    # Only a converged solve is accepted: an "optimal_inaccurate" answer (e.g. OSQP stopping at its
    # iteration limit) goes to the next solver, and the fallback is recorded.
    if status != cp.OPTIMAL or theta is None or not np.all(np.isfinite(theta)):
        return str(status), None
    return str(status), np.array(theta, dtype=float)


def solver_options(solver: str, tight: bool = False) -> dict:
    """Tolerances that make every solver accurate enough for weights compared to 1e-6."""
    if solver == "OSQP":
        return {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iter": 20000, "polishing": True}
    if solver == "SCS":
        return {"eps": 1e-7, "max_iters": 20000}
    if tight and solver == "ECOS":
        return {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10, "max_iters": 500}
    if tight and solver == "CLARABEL":
        return {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
    return {}
