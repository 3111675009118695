"""The problems the solver layer accepts, and the constraint sets they share.

Every model family states its training either in residual form, ``LinearAttentionProblem``
(min loss(y - r - Phi theta), loss l2 or l1), or directly as ``QuadraticProblem``
(min 1/2 theta'H theta + f'theta) or ``LinearProblem`` (min c'theta). All three carry one
``LinearConstraints`` (bounds and equality rows). The squared residual form maps onto the
quadratic one with H = 2 Phi'Phi, f = -2 Phi'(y - r) (see :func:`as_quadratic`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

LOSSES = ("l2", "l1")


@dataclass(frozen=True)
class LinearConstraints:
    """theta >= lower, theta <= upper (inf = none), eq_matrix @ theta == eq_rhs."""

    lower: np.ndarray
    upper: np.ndarray
    eq_matrix: np.ndarray
    eq_rhs: np.ndarray

    @property
    def size(self) -> int:
        """The length of theta."""
        return len(self.lower)

    @cached_property
    def finite_upper(self) -> np.ndarray:
        """Which upper bounds are finite: read by every ``violation`` check of a solve, taken once."""
        return np.isfinite(self.upper)

    def structure_key(self) -> str:
        """Identifies what must be compiled in: the equality matrix and which uppers are finite."""
        h = hashlib.sha1()
        h.update(np.ascontiguousarray(self.eq_matrix, dtype=float).tobytes())
        h.update(np.isfinite(self.upper).tobytes())
        h.update(str(self.eq_matrix.shape).encode())
        return h.hexdigest()

    def violation(self, theta: np.ndarray) -> float:
        """Largest violation of any constraint by theta (0 when feasible; inf when theta is not finite)."""
        if not np.all(np.isfinite(theta)):
            return float("inf")
        parts = [np.max(self.lower - theta, initial=0.0)]
        finite = self.finite_upper
        if finite.any():
            parts.append(np.max(theta[finite] - self.upper[finite], initial=0.0))
        if len(self.eq_rhs):
            parts.append(np.max(np.abs(self.eq_matrix @ theta - self.eq_rhs)))
        return float(max(parts))

    def cleaned(self, theta: np.ndarray, rounds: int = 4) -> np.ndarray:
        """theta moved onto the constraint set: clipped to the bounds, then the equality rows'
        residual removed by the least-norm step on the coordinates strictly inside their bounds
        (repeated a few times). A solver's 1e-9 slack becomes ~1e-15; a far-off point stays far."""
        theta = np.clip(theta, self.lower, self.upper)
        if not len(self.eq_rhs):
            return theta
        for _ in range(rounds):
            gap = self.eq_rhs - self.eq_matrix @ theta
            if np.max(np.abs(gap)) <= 1e-14:
                break
            free = (theta > self.lower) & (theta < self.upper)
            if not free.any():
                break
            theta = theta.copy()  # the least-norm step on the free coordinates: A_F step = gap
            theta[free] += np.linalg.lstsq(self.eq_matrix[:, free], gap, rcond=None)[0]
            theta = np.clip(theta, self.lower, self.upper)
        return theta


class ConstraintBuilder:
    """Builds LinearConstraints block by block: simplices, linked sums, bounds."""

    def __init__(self, size: int):
        self.size = size
        self.lower = np.zeros(size)
        self.upper = np.full(size, np.inf)
        self._rows: list[np.ndarray] = []
        self._rhs: list[float] = []

    def simplex(self, block: slice | np.ndarray, total: float = 1.0) -> ConstraintBuilder:
        """theta[block] >= 0 and sums to ``total``."""
        row = np.zeros(self.size)
        row[block] = 1.0
        self._rows.append(row)
        self._rhs.append(float(total))
        return self

    def linked_sum(self, block: slice | np.ndarray, target: int) -> ConstraintBuilder:
        """sum(theta[block]) == theta[target] (e.g. sum_k gamma_k^(j) = eps_j)."""
        row = np.zeros(self.size)
        row[block] = 1.0
        row[target] -= 1.0
        self._rows.append(row)
        self._rhs.append(0.0)
        return self

    def bounds(self, index: int | slice | np.ndarray, lower: float, upper: float) -> ConstraintBuilder:
        """lower <= theta[index] <= upper."""
        self.lower[index] = lower
        self.upper[index] = upper
        return self

    def build(self) -> LinearConstraints:
        """The LinearConstraints of every block added so far (bounds default to theta >= 0)."""
        eq = np.array(self._rows) if self._rows else np.zeros((0, self.size))
        return LinearConstraints(self.lower.copy(), self.upper.copy(), eq, np.array(self._rhs))


def simplex_constraints(size: int) -> LinearConstraints:
    """The unit simplex of dimension ``size`` (the constraint of every tree-weight vector)."""
    return ConstraintBuilder(size).simplex(slice(None)).build()


@dataclass(frozen=True)
class LinearAttentionProblem:
    """min over theta of loss(y - r - Phi theta) under ``constraints``; loss is l2 or l1.

    The arrays are not changed once the problem is posed: ``target`` is taken from them once."""

    y: np.ndarray
    r: np.ndarray
    Phi: np.ndarray
    constraints: LinearConstraints

    @cached_property
    def target(self) -> np.ndarray:
        """y - r, what Phi theta fits, (n,): computed once per problem for the finiteness check,
        the quadratic form's f, the backends and the objective, each of which took it anew."""
        return self.y - self.r

    def residual(self, theta: np.ndarray) -> np.ndarray:
        """y - r - Phi theta: the training residual at theta, (n,) (``target`` minus Phi theta: the
        same two subtractions in the same order as ``y - r - Phi @ theta``, so the same bits)."""
        return self.target - self.Phi @ theta

    def objective(self, theta: np.ndarray, loss: str) -> float:
        """The training loss at theta, computed on the original n rows."""
        res = self.residual(theta)
        return float(res @ res) if loss == "l2" else float(np.abs(res).sum())

    def finite(self) -> bool:
        """Whether Phi and y - r are finite (a solver is never given NaN or inf)."""
        return bool(np.all(np.isfinite(self.Phi)) and np.all(np.isfinite(self.target)))


@dataclass(frozen=True)
class QuadraticProblem:
    """min 1/2 theta'H theta + f'theta under ``constraints``; H symmetric positive semidefinite.

    E.g. a linear score plus a ridge, c.w + lambda ||w||^2: H = 2 lambda I, f = c."""

    H: np.ndarray
    f: np.ndarray
    constraints: LinearConstraints

    def objective(self, theta: np.ndarray, loss: str | None = None) -> float:
        """1/2 theta'H theta + f'theta at theta (``loss`` is ignored: the form is fixed)."""
        return float(0.5 * theta @ self.H @ theta + self.f @ theta)

    def finite(self) -> bool:
        """Whether H and f are finite (a solver is never given NaN or inf)."""
        return bool(np.all(np.isfinite(self.H)) and np.all(np.isfinite(self.f)))


@dataclass(frozen=True)
class LinearProblem:
    """min c'theta under ``constraints`` (an LP; e.g. the ridge-free robust score)."""

    c: np.ndarray
    constraints: LinearConstraints

    def objective(self, theta: np.ndarray, loss: str | None = None) -> float:
        """c'theta at theta (``loss`` is ignored: the form is fixed)."""
        return float(self.c @ theta)

    def finite(self) -> bool:
        """Whether c is finite (a solver is never given NaN or inf)."""
        return bool(np.all(np.isfinite(self.c)))


Problem = LinearAttentionProblem | QuadraticProblem | LinearProblem


def kind_of(problem: Problem, loss: str) -> str:
    """'qp' or 'lp': what the problem is once the loss is applied."""
    if isinstance(problem, QuadraticProblem):
        return "qp"
    if isinstance(problem, LinearProblem):
        return "lp"
    return "qp" if loss == "l2" else "lp"


def gram(Phi: np.ndarray) -> np.ndarray:
    """H = 2 Phi'Phi, the quadratic term of a squared-loss problem (its costliest part to build)."""
    return 2.0 * (Phi.T @ Phi)


def as_quadratic(problem: LinearAttentionProblem | QuadraticProblem, H: np.ndarray | None = None) -> QuadraticProblem:
    """The quadratic form of a squared-loss problem: H = 2 Phi'Phi, f = -2 Phi'(y - r).

    ``H``: ``gram(problem.Phi)`` computed before, for a Phi of the same bytes and layout (grid points
    that differ only in r, e.g. eps-ABRF's tau, AGBoost's delta, share their Phi = eps B)."""
    if isinstance(problem, QuadraticProblem):
        return problem
    H = gram(problem.Phi) if H is None else H
    f = -2.0 * (problem.Phi.T @ problem.target)
    return QuadraticProblem(H, f, problem.constraints)
