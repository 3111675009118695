"""The shared solver layer: Gram form equals the n-form, constraints hold, fallbacks are recorded."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from afr_cli.errors import SolverError
from afr_cli.solve import (ConstraintBuilder, LinearAttentionProblem, gram_factor, simplex_constraints,
                           solve)


def _problem(n=120, p=12, seed=0):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, p))
    y = Phi @ rng.dirichlet(np.ones(p)) + rng.normal(scale=0.3, size=n)
    return LinearAttentionProblem(y, rng.normal(scale=0.1, size=n), Phi, simplex_constraints(p))


def test_gram_factor_preserves_the_squared_loss_up_to_a_constant():
    pr = _problem()
    R, z = gram_factor(pr.Phi, pr.y - pr.r)
    rng = np.random.default_rng(1)
    diffs = []
    for theta in rng.normal(size=(5, pr.Phi.shape[1])):
        diffs.append(pr.objective(theta, "l2") - np.sum((R @ theta - z) ** 2))
    assert np.ptp(diffs) < 1e-6 * abs(diffs[0]) + 1e-8


@pytest.mark.parametrize("solver", ["ECOS", "CLARABEL", "OSQP"])
def test_compiled_qp_matches_a_fresh_nform_problem(solver):
    pr = _problem()
    w = cp.Variable(pr.Phi.shape[1])
    cp.Problem(cp.Minimize(cp.sum_squares(pr.y - pr.r - pr.Phi @ w)), [w >= 0, cp.sum(w) == 1]).solve(solver="CLARABEL")
    res = solve(pr, solver=solver)
    assert res.status == "optimal" and res.solver == solver
    assert res.objective == pytest.approx(pr.objective(w.value, "l2"), rel=1e-6)
    assert pr.constraints.violation(res.theta) < 1e-7


def test_recompiled_problem_is_reused_with_new_values():
    a, b = _problem(seed=1), _problem(seed=2)
    ra, rb = solve(a), solve(b)
    assert not np.allclose(ra.theta, rb.theta)
    assert solve(a).objective == pytest.approx(ra.objective, rel=1e-9)


def test_lp_minimises_the_absolute_loss():
    pr = _problem(n=60, p=6)
    w = cp.Variable(6)
    cp.Problem(cp.Minimize(cp.norm1(pr.y - pr.r - pr.Phi @ w)), [w >= 0, cp.sum(w) == 1]).solve(solver="CLARABEL")
    res = solve(pr, loss="l1")
    assert res.objective == pytest.approx(pr.objective(w.value, "l1"), rel=1e-6)


def test_linked_sums_and_bounds_hold():
    # theta = (gamma_1..gamma_4, eps): sum gamma = eps, 0.2 <= eps <= 0.5
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(80, 5))
    y = Phi @ np.array([1, 1, 1, 1, 0.0]) + 5
    cons = ConstraintBuilder(5).linked_sum(slice(0, 4), 4).bounds(4, 0.2, 0.5).build()
    res = solve(LinearAttentionProblem(y, np.zeros(80), Phi, cons))
    assert res.theta[:4].sum() == pytest.approx(res.theta[4], abs=1e-7)
    assert 0.2 - 1e-8 <= res.theta[4] <= 0.5 + 1e-8
    assert res.theta[4] == pytest.approx(0.5, abs=1e-6)  # the data pull eps to its upper bound


def test_failure_falls_back_and_is_recorded(monkeypatch):
    import afr_cli.solve as solve_mod

    real = solve_mod._try_solver
    monkeypatch.setattr(solve_mod, "_try_solver",
                        lambda p, loss, name: ("solver_error", None) if name == "ECOS" else real(p, loss, name))
    res = solve(_problem())
    assert res.solver == "CLARABEL" and res.fell_back
    assert [a["solver"] for a in res.attempts] == ["ECOS", "CLARABEL"]


def test_all_solvers_failing_is_an_error_not_default_weights(monkeypatch):
    import afr_cli.solve as solve_mod

    monkeypatch.setattr(solve_mod, "_try_solver", lambda p, loss, name: ("infeasible", None))
    with pytest.raises(SolverError, match="ECOS: infeasible"):
        solve(_problem())


def test_infeasible_constraints_fail_loudly():
    cons = ConstraintBuilder(3).simplex(slice(None)).bounds(slice(None), 0.5, 1.0).build()  # sum >= 1.5
    with pytest.raises(SolverError):
        solve(LinearAttentionProblem(np.ones(10), np.zeros(10), np.ones((10, 3)), cons))
