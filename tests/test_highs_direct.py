"""``highs._direct_lp`` (scipy's bundled HiGHS without linprog's Python around it) pinned bit for
bit against ``linprog(method="highs-ipm")``, the path it replaces for ``LinearProblem``.

Both reach the same HiGHS build with the same model and options, so no tolerance: the status code
(after scipy's own status mapping and feasibility check) and x's bytes must be equal. Cases: the
robust RF's weight LPs (W(eps) for several eps, costs with ties and zeros, 1 to 130 trees, eps = 1
where every lower bound is 0), several equality rows with zeros in them, none at all, bounds that
are infinite (or NaN, or +inf below, which linprog reads as no bound), infeasible and unbounded
LPs, and a single variable. Input linprog rejects (not finite) still goes to linprog, which raises.
"""

from __future__ import annotations

import numpy as np
import pytest

from afr_cli.models.robust import weights_problem
from afr_cli.solvers import highs
from afr_cli.solvers.problems import LinearConstraints, LinearProblem


def _linprog_answer(problem: LinearProblem) -> tuple[int, np.ndarray | None]:
    """(status code, x) as the old path asked linprog for them."""
    cons = problem.constraints
    res = highs._linprog(problem.c, cons.eq_matrix, cons.eq_rhs, highs._bounds(cons))
    return res.status, (None if res.x is None else np.asarray(res.x))


def _lp(c, lower, upper, A=None, b=None) -> LinearProblem:
    p = len(c)
    A = np.zeros((0, p)) if A is None else np.asarray(A, float)
    b = np.zeros(0) if b is None else np.asarray(b, float)
    return LinearProblem(
        np.asarray(c, float), LinearConstraints(np.asarray(lower, float), np.asarray(upper, float), A, b)
    )


def _cases():
    rng = np.random.default_rng(36)
    for trees in (1, 2, 3, 7, 100, 130):
        for eps in (0.25, 0.5, 0.75, 1.0):
            c = rng.normal(size=trees)
            yield f"robust T={trees} eps={eps}", weights_problem(c, eps, 0.0)
            ties = rng.integers(0, 3, trees).astype(float)  # tied costs: a degenerate vertex choice
            ties[: trees // 2] = 0.0
            yield f"robust ties T={trees} eps={eps}", weights_problem(ties, eps, 0.0)
    c = rng.exponential(size=100) * 1e-8  # tiny, scaled costs as the family poses them
    yield "robust tiny costs", weights_problem(c, 0.5, 0.0)
    p = 12
    A = rng.normal(size=(3, p))
    A[A < -0.5] = 0.0  # zeros that the sparse matrix leaves out
    A[:, 4] = 0.0  # a column with no entry at all
    x0 = rng.uniform(0.1, 0.9, p)
    yield "three rows, box", _lp(rng.normal(size=p), np.zeros(p), np.ones(p), A, A @ x0)
    lower = np.zeros(p)
    lower[:3] = -np.inf
    upper = np.full(p, np.inf)
    upper[5] = 2.0
    yield (
        "infinite bounds, bounded objective",
        _lp(np.abs(rng.normal(size=p)) * np.sign(lower + 0.5), lower, upper, A, A @ x0),
    )
    odd = np.zeros(p)
    odd[0], odd[1] = np.nan, np.inf  # linprog reads both as no lower bound
    odd_upper = np.ones(p)
    odd_upper[2], odd_upper[3] = -np.inf, np.nan  # and these as no upper bound
    yield "non-finite bounds read as none", _lp(np.abs(rng.normal(size=p)), odd, odd_upper, A, A @ x0)
    yield "no equality rows", _lp(rng.normal(size=p), -np.ones(p), np.ones(p))
    yield "unbounded", _lp(-np.ones(p), np.zeros(p), np.full(p, np.inf))
    yield "unbounded with a row", _lp(-np.ones(3), np.zeros(3), np.full(3, np.inf), [[1.0, -1.0, 0.0]], [0.0])
    yield "infeasible bounds vs row", _lp(np.ones(4), np.full(4, 0.5), np.ones(4), np.ones((1, 4)), [1.0])
    yield "infeasible rows", _lp(np.ones(2), np.zeros(2), np.full(2, np.inf), [[1.0, 1.0], [1.0, 1.0]], [1.0, 2.0])
    yield "one variable", _lp([2.0], [-1.0], [3.0])
    yield "one variable fixed by its row", _lp([-1.0], [0.0], [np.inf], [[2.0]], [3.0])
    for seed in range(3):  # large enough that presolve leaves the interior point and crossover work to do
        big = np.random.default_rng(seed)
        A = big.normal(size=(30, 80))
        A[big.random(A.shape) < 0.3] = 0.0
        yield (
            f"dense 30 x 80 ({seed})",
            _lp(big.normal(size=80), np.zeros(80), np.full(80, 2.0), A, A @ big.uniform(0, 1, 80)),
        )
    yield "degenerate: all costs equal", weights_problem(np.ones(50), 1.0, 0.0)


CASES = list(_cases())


def test_fast_path_is_taken_with_the_pinned_scipy(monkeypatch):
    assert highs._highs() is not None

    def refuse(*args, **kwargs):
        raise AssertionError("linprog was called")

    monkeypatch.setattr(highs, "_linprog", refuse)
    status, theta = highs.solve_lp(weights_problem(np.arange(5.0), 0.5, 0.0))
    assert status == "optimal" and theta is not None


@pytest.mark.parametrize("name,problem", CASES, ids=[name for name, _ in CASES])
def test_direct_equals_linprog_bit_for_bit(name, problem):
    got = highs._direct_lp(problem)
    assert got is not None, name
    code, x = got
    want_code, want_x = _linprog_answer(problem)
    assert code == want_code, name
    if want_x is None:
        assert x is None, name
    else:
        assert x.dtype == want_x.dtype and x.shape == want_x.shape, name
        assert x.tobytes() == want_x.tobytes(), name


def test_the_cases_cover_every_outcome():
    codes = {_linprog_answer(problem)[0] for _, problem in CASES}
    assert {0, 2, 3} <= codes


def test_solve_lp_answers_as_before(monkeypatch):
    """solve_lp's (status, theta) with the direct path and with linprog alone."""
    new = [highs.solve_lp(problem) for _, problem in CASES]
    monkeypatch.setattr(highs, "_highs", lambda: None)
    old = [highs.solve_lp(problem) for _, problem in CASES]
    for (name, _), (s_new, t_new), (s_old, t_old) in zip(CASES, new, old):
        assert s_new == s_old, name
        assert (t_new is None) == (t_old is None), name
        if t_new is not None:
            assert t_new.tobytes() == t_old.tobytes(), name


@pytest.mark.parametrize("where", ["c", "row", "rhs"])
def test_input_linprog_rejects_still_goes_to_linprog(where):
    c, A, b = np.ones(3), np.ones((1, 3)), np.ones(1)
    {"c": c, "row": A[0], "rhs": b}[where][0] = np.nan
    problem = _lp(c, np.zeros(3), np.ones(3), A, b)
    assert highs._direct_lp(problem) is None
    with pytest.raises(ValueError, match="must not contain values inf, nan"):
        highs.solve_lp(problem)


def test_other_scipy_falls_back(monkeypatch):
    import scipy

    monkeypatch.setattr(scipy, "__version__", "0.0.0")
    highs._highs.cache_clear()
    try:
        assert highs._highs() is None
        assert highs._direct_lp(weights_problem(np.arange(4.0), 0.5, 0.0)) is None
        assert highs.solve_lp(weights_problem(np.arange(4.0), 0.5, 0.0))[0] == "optimal"
    finally:
        monkeypatch.undo()
        highs._highs.cache_clear()
    assert highs._highs() is not None
