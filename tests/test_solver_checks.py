"""The solve layer's checks without repeated work: y - r taken once per problem, the
scale without an array of magnitudes, DAQP's ridge without an identity matrix, the finite upper
bounds found once per constraint set. Each gives the floats of the code it replaces, bit for bit,
so every decision (finite, feasible, KKT) and every reported objective is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from afr_cli.solvers.dense_qp import DAQP_RIDGE, with_ridge
from afr_cli.solvers.problems import (
    ConstraintBuilder,
    LinearAttentionProblem,
    as_quadratic,
    gram,
    simplex_constraints,
)
from afr_cli.solvers.solve import largest_magnitude, solve


class _CountedSubtractions(np.ndarray):
    """An array that counts the subtractions it is the left operand of (y - r)."""

    count = 0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.subtract and method == "__call__" and inputs[0] is self:
            type(self).count += 1
        plain = [np.asarray(x) if isinstance(x, _CountedSubtractions) else x for x in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)


def _problem(seed: int, n: int = 50, p: int = 7) -> LinearAttentionProblem:
    rng = np.random.default_rng(seed)
    return LinearAttentionProblem(
        rng.normal(size=n), rng.normal(size=n), rng.normal(size=(n, p)), simplex_constraints(p)
    )


def test_a_solve_takes_y_minus_r_once():
    base = _problem(0)
    _CountedSubtractions.count = 0
    y = base.y.view(_CountedSubtractions)
    result = solve(LinearAttentionProblem(y, base.r, base.Phi, base.constraints))
    assert _CountedSubtractions.count == 1  # the check, f and the objective read one target
    assert result.theta.tobytes() == solve(base).theta.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_the_target_gives_the_residual_objective_and_f_of_y_minus_r(seed):
    problem = _problem(seed, n=200, p=30)
    theta = solve(problem).theta
    residual = problem.y - problem.r - problem.Phi @ theta
    assert problem.residual(theta).tobytes() == residual.tobytes()
    assert problem.objective(theta, "l2") == float(residual @ residual)
    assert problem.objective(theta, "l1") == float(np.abs(residual).sum())
    f = -2.0 * (problem.Phi.T @ (problem.y - problem.r))
    assert as_quadratic(problem).f.tobytes() == f.tobytes()


@pytest.mark.parametrize(
    "where, value",
    [("Phi", np.nan), ("Phi", np.inf), ("y", -np.inf), ("r", np.nan), ("y", 1e308), ("y", 1.0)],
)
def test_finite_decides_as_before(where, value):
    problem = _problem(1)
    arrays = {"y": problem.y.copy(), "r": problem.r.copy(), "Phi": problem.Phi.copy()}
    arrays[where].reshape(-1)[3] = value
    if value == 1e308:
        arrays["r"][3] = -1e308  # y and r finite, y - r overflows: not finite, as before
    posed = LinearAttentionProblem(arrays["y"], arrays["r"], arrays["Phi"], problem.constraints)
    with np.errstate(over="ignore"):
        before = bool(np.all(np.isfinite(arrays["Phi"])) and np.all(np.isfinite(arrays["y"] - arrays["r"])))
        assert posed.finite() == before and (before is (value == 1.0))


@pytest.mark.parametrize("size", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("order", ["C", "F"])
def test_the_ridge_is_h_plus_ridge_times_the_identity_bit_for_bit(size, order):
    H = np.random.default_rng(size).normal(size=(size, size))
    if size >= 2:
        H[0, 1] = H[1, 1] = -0.0  # a signed zero off and on the diagonal
    H = np.asarray(H, order=order)
    got, want = with_ridge(H, DAQP_RIDGE), np.ascontiguousarray(H + DAQP_RIDGE * np.eye(size))
    assert got.flags.c_contiguous and got.tobytes() == want.tobytes()
    assert got is not H and (size < 2 or H[1, 1] == 0.0)  # H itself untouched


@pytest.mark.parametrize(
    "values",
    [[3.0, -5.0, 1.0], [-1.0, -2.0], [0.5, 2.0], [0.0, -0.0], [], [1.0, np.nan], [np.inf, 1.0], [-np.inf, 2.0]],
)
def test_the_largest_magnitude_is_the_magnitudes_maximum(values):
    a = np.array(values, dtype=float)
    want, got = np.abs(a).max(initial=0.0), largest_magnitude(a)
    assert (np.isnan(want) and np.isnan(got)) or (want == got and type(got) is float)
    matrix = np.random.default_rng(2).normal(size=(9, 9))
    assert largest_magnitude(matrix) == np.abs(matrix).max()


def test_the_finite_upper_bounds_are_found_once_and_violations_are_unchanged():
    cons = ConstraintBuilder(6).simplex(slice(0, 3)).bounds(slice(3, 5), 0.1, 0.9).build()
    assert cons.finite_upper is cons.finite_upper
    assert cons.finite_upper.tolist() == [False, False, False, True, True, False]
    for theta, want in [
        (np.array([0.5, 0.25, 0.25, 0.5, 0.5, 3.0]), 0.0),
        (np.array([0.5, 0.25, 0.25, 0.95, 0.5, 3.0]), 0.95 - 0.9),
        (np.array([0.5, 0.5, 0.25, 0.5, 0.05, 0.0]), max(0.25, 0.1 - 0.05)),
        (np.array([np.nan, 0.5, 0.5, 0.5, 0.5, 0.0]), np.inf),
    ]:
        assert cons.violation(theta) == want


def test_a_gram_shared_by_the_caller_still_gives_the_same_solve():
    problem = _problem(3, n=120, p=12)
    alone, shared = solve(problem), solve(problem, gram_of=lambda: gram(problem.Phi))
    assert alone.theta.tobytes() == shared.theta.tobytes() and alone.objective == shared.objective
