"""The one solver layer: every family's training problem, solved, checked and logged.

A family states its problem as a :class:`LinearAttentionProblem` (y ~ r + Phi theta, loss l2
or l1), a :class:`QuadraticProblem` (1/2 theta'H theta + f'theta) or a :class:`LinearProblem`
(c'theta), all under bounds and equality rows. ``solver="AUTO"`` (the default) sends QPs to a
dense QP solver on the quadratic (Gram) form and LPs to HiGHS; their answer is kept only when it
is feasible to 1e-8 and (QPs) its KKT residual is small, otherwise the cvxpy chain
(CLARABEL, ECOS, SCS) takes over and the fallback is recorded. ECOS, CLARABEL, OSQP and SCS stay
selectable by name (compiled cvxpy problems, ``afr_cli.solvers.cvxpy_backend``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from afr_cli.errors import SolverError
from afr_cli.solvers.checks import FEASIBILITY_TOL, KKT_TOL, kkt_residual
from afr_cli.solvers.cvxpy_backend import (
    CVXPY_SOLVERS,
    GRAM_JITTER,
    clear_compiled_cache,
    gram_factor,
    hessian_factor,
    solve_cvxpy,
)
from afr_cli.solvers.dense_qp import DENSE_QP_SOLVERS, solve_dense
from afr_cli.solvers.highs import solve_lp
from afr_cli.solvers.problems import (
    LOSSES,
    ConstraintBuilder,
    LinearAttentionProblem,
    LinearConstraints,
    LinearProblem,
    Problem,
    QuadraticProblem,
    as_quadratic,
    kind_of,
    simplex_constraints,
)

__all__ = [
    "AUTO",
    "DEFAULT_SOLVER",
    "SOLVERS",
    "LOSSES",
    "ConstraintBuilder",
    "LinearAttentionProblem",
    "LinearConstraints",
    "LinearProblem",
    "QuadraticProblem",
    "SolveResult",
    "solve",
    "gram_factor",
    "hessian_factor",
    "simplex_constraints",
    "clear_compiled_cache",
    "GRAM_JITTER",
]

AUTO = "AUTO"
DEFAULT_SOLVER = AUTO
# What a config or an estimator may name; the fast backends are also callable by name (benchmarks).
SOLVERS = (AUTO,) + CVXPY_SOLVERS
BACKENDS = SOLVERS + DENSE_QP_SOLVERS + ("HIGHS",)
# Solvers tried, in order, after the requested one fails (OSQP handles QPs only).
_FALLBACKS = ("CLARABEL", "ECOS", "SCS")


# AUTO's QP backends by number of weights (``afr bench qp``, Airfoil shapes): DAQP's active set
# is exact and fastest up to ~200 weights (0.7 ms at 100, 10 ms at SAT-RF's 200); above, PIQP's
# interior point wins (19 ms against 93 ms at 300 weights, 0.65 s against 2.3 s at 1,005).
DAQP_MAX_WEIGHTS = 200


def auto_backends(kind: str, size: int) -> list[str]:
    """The fast backends AUTO tries, in order, for a problem of this kind and number of weights."""
    if kind == "lp":
        return ["HIGHS"]
    return ["DAQP", "PIQP"] if size <= DAQP_MAX_WEIGHTS else ["PIQP", "DAQP"]


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


def solve(
    problem: Problem,
    loss: str = "l2",
    solver: str = DEFAULT_SOLVER,
    fallbacks: tuple[str, ...] = _FALLBACKS,
    warm: np.ndarray | None = None,
    gram_of: Callable[[], np.ndarray] | None = None,
) -> SolveResult:
    """Solve ``problem``; on failure try the fallbacks in order and record each attempt.

    ``loss`` applies to a LinearAttentionProblem (the direct forms carry their objective).
    ``warm``: a previous solution of a problem with the same constraints (DAQP starts from its
    active set). ``gram_of``: gives ``gram(problem.Phi)`` when a dense QP solver needs it (a
    caller's cache of it; called at most once per solve). Raises SolverError when every solver
    fails: callers never get silent weights.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    name = solver.upper()
    if name not in BACKENDS:
        raise ValueError(f"solver must be one of {BACKENDS}, got {solver!r}")
    kind = kind_of(problem, loss)
    if not problem.finite():
        raise SolverError("the attention problem has NaN or infinite entries; no solver can fit it")
    first = auto_backends(kind, problem.constraints.size) if name == AUTO else [name]
    order = first + [s for s in fallbacks if s not in first and not (kind == "lp" and s == "OSQP")]
    attempts: list[dict] = []
    start = time.perf_counter()
    for backend in order:
        t0 = time.perf_counter()
        status, theta = _attempt(problem, kind, backend, warm, gram_of)
        attempts.append({"solver": backend, "status": status, "seconds": time.perf_counter() - t0})
        if theta is not None:
            return SolveResult(
                theta, backend, status, problem.objective(theta, loss), time.perf_counter() - start, attempts
            )
    tried = ", ".join(f"{a['solver']}: {a['status']}" for a in attempts)
    raise SolverError(f"no solver could fit the attention weights ({tried})")


def largest_magnitude(a: np.ndarray) -> float:
    """max |a_ij| (0 for an empty array), as ``np.abs(a).max(initial=0.0)`` gives it, without the
    array of magnitudes: the larger of the largest entry and minus the smallest (|x| is exact, so
    the same float; a NaN anywhere is NaN either way, since max and min propagate it)."""
    return max(float(a.max(initial=0.0)), -float(a.min(initial=0.0)))


def _attempt(
    problem: Problem, kind: str, backend: str, warm: np.ndarray | None, gram_of: Callable[[], np.ndarray] | None = None
) -> tuple[str, np.ndarray | None]:
    """One backend's (status, theta): theta cleaned onto the constraints and checked, else None."""
    cons = problem.constraints
    quad = None
    try:
        if backend in DENSE_QP_SOLVERS:
            if kind != "qp":
                return "error: not a QP", None
            shared = gram_of() if gram_of is not None and isinstance(problem, LinearAttentionProblem) else None
            quad = as_quadratic(problem, shared)
            scale = max(largest_magnitude(quad.H), largest_magnitude(quad.f), 1e-300)
            H, f = quad.H / scale, quad.f / scale
            status, theta = solve_dense(backend, H, f, cons, warm)
        elif backend == "HIGHS":
            if kind != "lp":
                return "error: not an LP", None
            status, theta = solve_lp(problem)
        else:
            status, theta = solve_cvxpy(problem, kind, backend)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError, RuntimeError) as err:
        return f"error: {type(err).__name__}", None
    if theta is None:
        return status, None
    theta = cons.cleaned(theta)
    if cons.violation(theta) > FEASIBILITY_TOL:
        return f"{status} (infeasible point)", None
    if quad is not None and kkt_residual(H, f, cons, theta) > KKT_TOL:
        return f"{status} (KKT residual above {KKT_TOL:g})", None
    return status, theta
