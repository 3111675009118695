"""LPs through HiGHS (``scipy.optimize.linprog``): the L1 residual problem and ``LinearProblem``.

The L1 loss sum |t - Phi theta| becomes min 1'(u + v) with Phi theta + u - v = t, u, v >= 0
(theta first, then u, v). HiGHS's interior point with crossover (a vertex, as exact as the
simplex) took 0.84 s on Airfoil's eps-ABRF L1 problem (n = 1,202, 100 weights) against 1.7 s
for its default choice and 2.4 s for the dual simplex; the inequality form was slower in all three.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from afr_cli.solvers.problems import LinearAttentionProblem, LinearConstraints, LinearProblem

_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10, "presolve": True}
_STATUS = {0: "optimal", 1: "iteration limit", 2: "infeasible", 3: "unbounded", 4: "numerical difficulties"}


def solve_lp(problem: LinearAttentionProblem | LinearProblem) -> tuple[str, np.ndarray | None]:
    """(status, theta or None) of the problem's LP."""
    cons = problem.constraints
    p = cons.size
    if isinstance(problem, LinearProblem):
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
    from scipy.optimize import linprog  # an LP is solved: not imported to read a config (issue 32)

    res = linprog(
        c,
        A_eq=A_eq if len(b_eq) else None,
        b_eq=b_eq if len(b_eq) else None,
        bounds=bounds,
        method="highs-ipm",
        options=_OPTIONS,
    )
    status = _STATUS.get(res.status, f"status {res.status}")
    return status, (np.asarray(res.x[:p], dtype=float) if res.status == 0 else None)


def _bounds(cons: LinearConstraints) -> list[tuple[float, float | None]]:
    return [
        (lo if np.isfinite(lo) else None, hi if np.isfinite(hi) else None) for lo, hi in zip(cons.lower, cons.upper)
    ]
