"""LPs through HiGHS (``scipy.optimize.linprog``): the L1 residual problem and ``LinearProblem``.

The L1 loss sum |t - Phi theta| becomes min 1'(u + v) with Phi theta + u - v = t, u, v >= 0
(theta first, then u, v). HiGHS's interior point with crossover (a vertex, as exact as the
simplex) took 0.84 s on Airfoil's eps-ABRF L1 problem (n = 1,202, 100 weights) against 1.7 s
for its default choice and 2.4 s for the dual simplex; the inequality form was slower in all three.

A ``LinearProblem`` (the robust RF's weights at lambda = 0: 100 weights, one equality row) takes
about 0.6 ms in HiGHS and 3-4 ms in ``linprog``'s Python around it, most of that in
``_highs_wrapper`` validating its options (a fresh ``HighsOptionsManager`` per option per call).
``_direct_lp`` hands HiGHS the same model and options as ``linprog(method="highs-ipm")`` does,
through the same scipy-bundled HiGHS, and maps its answer through scipy's own status mapping and
feasibility check, so status and x are linprog's bits (tests/test_highs_direct.py pins them over
feasible, infeasible, unbounded and degenerate LPs). It reaches scipy's private layer, so it is
taken only on the scipy it was checked against (``_DIRECT_SCIPY``) when every name and signature
it uses is there; otherwise, and for input linprog would reject, ``linprog`` runs as before.
"""

from __future__ import annotations

import inspect
from functools import cache
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from afr_cli.solvers.problems import LinearAttentionProblem, LinearConstraints, LinearProblem

_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10, "presolve": True}
_STATUS = {0: "optimal", 1: "iteration limit", 2: "infeasible", 3: "unbounded", 4: "numerical difficulties"}

# The scipy whose linprog(method="highs-ipm") ``_direct_lp`` reproduces, and what it reads of it.
_DIRECT_SCIPY = ("1.17.1",)
_LINPROG_HIGHS_PARAMS = (
    "lp, solver, time_limit=None, presolve=True, disp=False, maxiter=None, dual_feasibility_tolerance=None, "
    "primal_feasibility_tolerance=None, ipm_optimality_tolerance=None, simplex_dual_edge_weight_strategy=None, "
    "mip_rel_gap=None, mip_max_nodes=None, **unknown_options"
)
_WRAPPER_PARAMS = "c, indptr, indices, data, lhs, rhs, lb, ub, integrality, options"
_TOL = 1e-9  # linprog's default ``tol``, which its feasibility check (_check_result) reads


def solve_lp(problem: LinearAttentionProblem | LinearProblem) -> tuple[str, np.ndarray | None]:
    """(status, theta or None) of the problem's LP."""
    cons = problem.constraints
    p = cons.size
    if isinstance(problem, LinearProblem):
        direct = _direct_lp(problem)
        if direct is not None:
            code, x = direct
            return _STATUS.get(code, f"status {code}"), (np.asarray(x[:p], dtype=float) if code == 0 else None)
        c, A_eq, b_eq = problem.c, cons.eq_matrix, cons.eq_rhs
        bounds = _bounds(cons)
    else:
        n = len(problem.y)
        t = problem.target
        scale = max(np.abs(problem.Phi).max(initial=0.0), np.abs(t).max(initial=0.0), 1e-12)
        eye = sp.identity(n, format="csr")
        A_eq = sp.vstack(
            [
                sp.hstack([sp.csr_matrix(problem.Phi / scale), eye, -eye]),
                sp.hstack([sp.csr_matrix(cons.eq_matrix), sp.csr_matrix((len(cons.eq_rhs), 2 * n))]),
            ]
        )
        b_eq = np.concatenate([t / scale, cons.eq_rhs])
        c = np.concatenate([np.zeros(p), np.ones(2 * n)])
        bounds = _bounds(cons) + [(0.0, None)] * (2 * n)
    res = _linprog(c, A_eq, b_eq, bounds)
    status = _STATUS.get(res.status, f"status {res.status}")
    return status, (np.asarray(res.x[:p], dtype=float) if res.status == 0 else None)


def _linprog(c, A_eq, b_eq, bounds):
    """``linprog``'s result for min c.x, A_eq x = b_eq (none when b_eq is empty), within bounds."""
    from scipy.optimize import linprog  # imported only when an LP is solved: reading a config does not pay for it

    return linprog(
        c,
        A_eq=A_eq if len(b_eq) else None,
        b_eq=b_eq if len(b_eq) else None,
        bounds=bounds,
        method="highs-ipm",
        options=_OPTIONS,
    )


def _bounds(cons: LinearConstraints) -> list[tuple[float, float | None]]:
    return [
        (lo if np.isfinite(lo) else None, hi if np.isfinite(hi) else None) for lo, hi in zip(cons.lower, cons.upper)
    ]


@cache
def _highs() -> SimpleNamespace | None:
    """scipy's private HiGHS layer as ``_direct_lp`` uses it, or None (then linprog runs) when the
    scipy is not the one checked or a name or signature differs."""
    try:
        import scipy
        import scipy.optimize._highspy._core as core
        from scipy.optimize import _linprog_highs as lph
        from scipy.optimize._highspy import _highs_wrapper as wrapper
        from scipy.optimize._linprog_util import _check_result

        if scipy.__version__ not in _DIRECT_SCIPY:
            return None
        if str(inspect.signature(lph._linprog_highs))[1:-1] != _LINPROG_HIGHS_PARAMS:
            return None
        if str(inspect.signature(wrapper._highs_wrapper))[1:-1] != _WRAPPER_PARAMS:
            return None
        # the options _linprog_highs builds from _OPTIONS with solver="ipm", as _highs_wrapper sets
        # them (None values and "sense" skipped; the bool presolve as "on"), each checked once here
        # as the wrapper checks it on every call
        options = {
            "presolve": "on",
            "solver": "ipm",
            "highs_debug_level": lph.HighsDebugLevel.kHighsDebugLevelNone,
            "dual_feasibility_tolerance": _OPTIONS["dual_feasibility_tolerance"],
            "log_to_console": False,
            "output_flag": False,
            "primal_feasibility_tolerance": _OPTIONS["primal_feasibility_tolerance"],
            "simplex_strategy": lph.s_c.SimplexStrategy.kSimplexStrategyDual,
        }
        probe = core._Highs()
        for key, value in options.items():
            if wrapper.check_option(probe, key, value)[0] != 0:
                return None
        optimal = core.HighsModelStatus.kOptimal
        return SimpleNamespace(
            core=core,
            options=tuple(options.items()),
            optimal=optimal,
            error=core.HighsStatus.kError,
            model_error=core.HighsModelStatus.kModelError,
            colwise=core.MatrixFormat.kColwise,
            inf=lph.kHighsInf,
            status_of=lph._highs_to_scipy_status_message,
            check=_check_result,
        )
    except (ImportError, AttributeError, TypeError, ValueError):
        return None


def _direct_lp(problem: LinearProblem) -> tuple[int, np.ndarray | None] | None:
    """(linprog's status code, x or None) of the LP as ``linprog(method="highs-ipm")`` solves it,
    without its wrapper; None when this path is not available or the input is one linprog would
    reject (not finite, not 1-D): then linprog runs and raises as before."""
    h = _highs()
    if h is None:
        return None
    cons = problem.constraints
    c = np.asarray(problem.c)
    A = np.asarray(cons.eq_matrix)
    b = np.asarray(cons.eq_rhs)
    if (
        c.ndim != 1
        or c.size == 0
        or A.ndim != 2
        or b.ndim != 1
        or A.shape != (len(b), len(c))
        or np.shape(cons.lower) != c.shape
        or np.shape(cons.upper) != c.shape
    ):
        return None
    c = np.array(c, dtype=np.float64)
    A = np.array(A, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    if not (np.isfinite(c).all() and np.isfinite(A).all() and np.isfinite(b).all()):
        return None
    lower = np.asarray(cons.lower, dtype=np.float64)
    upper = np.asarray(cons.upper, dtype=np.float64)
    # linprog's bounds: a non-finite bound is None (``_bounds``), which it reads as -inf below, inf above
    bounds = np.column_stack(
        [np.where(np.isfinite(lower), lower, -np.inf), np.where(np.isfinite(upper), upper, np.inf)]
    )
    lb, ub = bounds.T.copy()
    lb[np.isinf(lb)] = -h.inf
    ub[np.isinf(ub)] = h.inf
    # csc_array(A)'s arrays: the nonzeros column by column, rows ascending
    nonzero = A.T != 0
    indptr = np.zeros(len(c) + 1, dtype=np.int32)
    np.cumsum(nonzero.sum(axis=1), out=indptr[1:])
    indices = np.nonzero(nonzero)[1].astype(np.int32)
    data = A.T[nonzero]
    rhs = b.copy()

    core = h.core
    lp = core.HighsLp()
    lp.num_col_ = len(c)
    lp.num_row_ = len(b)
    lp.a_matrix_.num_col_ = len(c)
    lp.a_matrix_.num_row_ = len(b)
    lp.a_matrix_.format_ = h.colwise
    lp.col_cost_ = c
    lp.col_lower_ = lb
    lp.col_upper_ = ub
    lp.row_lower_ = b
    lp.row_upper_ = rhs
    lp.a_matrix_.start_ = indptr
    lp.a_matrix_.index_ = indices
    lp.a_matrix_.value_ = data
    highs = core._Highs()
    options = core.HighsOptions()
    for key, value in h.options:
        setattr(options, key, value)
    x = fun = slack = con = None
    if highs.passOptions(options) == h.error:
        model_status = highs.getModelStatus()
    elif highs.passModel(lp) == h.error:
        model_status = h.model_error
    elif highs.run() == h.error:
        model_status = highs.getModelStatus()
    else:
        model_status = highs.getModelStatus()
        if model_status == h.optimal:
            solution = highs.getSolution()
            x = np.array(solution.col_value)
            residual = rhs - solution.row_value
            slack, con = np.array(residual[:0]), np.array(residual[0:])
            fun = highs.getInfo().objective_function_value
    code, message = h.status_of(model_status, "")
    code, _ = h.check(x, fun, code, slack, con, bounds, _TOL, message, None)
    return code, x
