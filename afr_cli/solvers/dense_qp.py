"""Dense QP backends on the quadratic form: DAQP (dual active set), PIQP and ProxQP (proxsuite).

Each takes H, f and the constraints and returns (status, theta or None). H and f arrive
scaled (largest entry 1), which leaves the minimiser unchanged and keeps the solvers'
absolute tolerances meaningful. DAQP gets H + DAQP_RIDGE I: its automatic proximal mode stops
early on the singular Grams of the LARF head blocks (objective 6e-6 above ECOS's, measured), the
ridge (1e-9 of H's largest entry) makes the factorisation exact and moves the objective by at
most 5e-10 ||theta||^2. DAQP accepts a warm start: the previous solution's active set.
"""

from __future__ import annotations

import numpy as np

from afr_cli.solvers.problems import LinearConstraints

DENSE_QP_SOLVERS = ("DAQP", "PIQP", "PROXQP")
DAQP_RIDGE = 1e-9
_DAQP_INF = 1e30
_DAQP_EQUALITY = 5
_DAQP_ACTIVE = 1
# exitflag > 0 is a solution: 1 optimal, 2 soft-optimal; < 0 infeasible, cycling, iteration limit, ...
_DAQP_STATUS = {
    1: "optimal",
    2: "optimal (soft)",
    -1: "infeasible",
    -2: "cycling",
    -3: "unbounded",
    -4: "iteration limit",
    -5: "nonconvex",
    -6: "initially infeasible",
    -7: "time limit",
}


def solve_dense(
    name: str, H: np.ndarray, f: np.ndarray, cons: LinearConstraints, warm: np.ndarray | None = None
) -> tuple[str, np.ndarray | None]:
    """Run one dense QP backend; (status, theta or None when it reports no solution)."""
    return {"DAQP": _daqp, "PIQP": _piqp, "PROXQP": _proxqp}[name](H, f, cons, warm)


def _daqp(H, f, cons: LinearConstraints, warm):
    import daqp

    p, m = cons.size, len(cons.eq_rhs)
    upper = np.concatenate([np.minimum(cons.upper, _DAQP_INF), cons.eq_rhs])
    lower = np.concatenate([np.maximum(cons.lower, -_DAQP_INF), cons.eq_rhs])
    sense = np.zeros(p + m, dtype=np.int32)
    sense[p:] = _DAQP_EQUALITY
    if warm is not None and len(warm) == p:  # start from the previous solution's active bounds
        sense[:p][(warm <= cons.lower) | (warm >= cons.upper)] = _DAQP_ACTIVE
    A = np.ascontiguousarray(cons.eq_matrix if m else np.zeros((0, p)))
    H = with_ridge(H, DAQP_RIDGE)
    x, _, flag, _ = daqp.solve(
        H,
        np.ascontiguousarray(f),
        A,
        upper,
        lower,
        sense,
        primal_tol=1e-10,
        eps_prox=0.0,
        iter_limit=20 * (p + m) + 1000,
    )
    status = _DAQP_STATUS.get(int(flag), f"exitflag {int(flag)}")
    return status, (np.asarray(x, dtype=float) if flag > 0 else None)


def with_ridge(H: np.ndarray, ridge: float) -> np.ndarray:
    """``np.ascontiguousarray(H + ridge * np.eye(p))`` bit for bit, without the identity matrix and
    its product: off the diagonal that sum adds ridge * 0 = +0.0 (which only turns a -0.0 into +0.0),
    so H + 0.0 in C order, and on the diagonal (H_ii + 0.0) + ridge = H_ii + ridge."""
    out = np.add(H, 0.0, order="C")
    diagonal = out.reshape(-1)[:: out.shape[0] + 1]  # a view of the C-ordered copy's diagonal
    diagonal += ridge
    return out


def _piqp(H, f, cons: LinearConstraints, warm):
    import piqp

    solver = piqp.DenseSolver()
    solver.settings.eps_abs = solver.settings.eps_rel = 1e-10
    solver.settings.max_iter = 500
    m = len(cons.eq_rhs)
    solver.setup(
        np.asfortranarray(H),
        f,
        np.asfortranarray(cons.eq_matrix) if m else None,
        cons.eq_rhs if m else None,
        None,
        None,
        None,
        cons.lower,
        cons.upper,
    )
    status = solver.solve()
    name = str(status).split(".")[-1].removeprefix("PIQP_").lower()
    return name, (np.array(solver.result.x, dtype=float) if status == piqp.PIQP_SOLVED else None)


def _proxqp(H, f, cons: LinearConstraints, warm):
    from proxsuite import proxqp

    m = len(cons.eq_rhs)
    res = proxqp.dense.solve(
        H,
        f,
        A=cons.eq_matrix if m else None,
        b=cons.eq_rhs if m else None,
        l_box=cons.lower,
        u_box=np.minimum(cons.upper, 1e20),
        eps_abs=1e-10,
        eps_rel=0.0,
        max_iter=10000,
    )
    status = str(res.info.status).split(".")[-1].removeprefix("PROXQP_").lower()
    ok = res.info.status == proxqp.QPSolverOutput.PROXQP_SOLVED
    return status, (np.array(res.x, dtype=float) if ok else None)
