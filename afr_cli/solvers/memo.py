"""Identical problems solved once per unit: a memo keyed by the problem's bytes.

A unit solves many problems, and some are the same problem exactly (SAT-RF's grid: 29 % of its
solves); units computed together (the robust RF's clean and noisy units of a split) share every
training problem. The memo keys a problem by a hash of everything that determines its solution:
the problem's form, every array (dtype, shape and bytes), its constraints, the loss and the
solver asked for, with xxh3_128 (a 128-bit non-cryptographic hash: no one forges these arrays,
and it hashes a 1,202 x 200 Phi about 20x faster than sha1 did, which cost as much as its Gram;
the keys only name problems within one process, so nothing stored depends on the hash). A hit
returns the stored solution, which is the bytes a second solve would give because every backend
is a pure function of its problem: the dense solvers and HiGHS keep no state, and the cvxpy
backends start every solve cold (``cvxpy_backend.solve_cvxpy``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import xxhash

from afr_cli.solvers.problems import LinearAttentionProblem, LinearProblem, Problem, QuadraticProblem, gram
from afr_cli.solvers.solve import DEFAULT_SOLVER, SolveResult, solve

# The Grams a memo keeps: a grid's points sharing a Phi are solved close together (the mixing
# parameters vary inside each design point's features), so a few suffice; LARF's many distinct
# T + M Grams (8 MB each at 1,000 trees) then never hold more than this.
GRAM_CACHE_BYTES = 64 * 2**20


def _arrays(problem: Problem) -> list:
    """Every array that determines the problem's solution; a LinearAttentionProblem's Phi first (its
    digest also keys the Gram ``SolveMemo`` keeps)."""
    if isinstance(problem, LinearAttentionProblem):
        own = [problem.Phi, problem.y, problem.r]
    elif isinstance(problem, QuadraticProblem):
        own = [problem.H, problem.f]
    elif isinstance(problem, LinearProblem):
        own = [problem.c]
    else:
        raise TypeError(f"not a solver-layer problem: {type(problem).__name__}")
    c = problem.constraints
    return own + [c.lower, c.upper, c.eq_matrix, c.eq_rhs]


def layout_key(array: np.ndarray) -> bytes:
    """A digest of an array's dtype, shape, strides and bytes: two arrays with the same key give the
    same bytes from the same computation (a matrix product's path, and so its last bits, follows
    the layout as well as the values)."""
    a = np.asarray(array)
    h = xxhash.xxh3_128(f"{a.dtype.str}{a.shape}{a.strides}".encode())
    h.update(np.ascontiguousarray(a))  # the buffer itself: no copy into a bytes object
    return h.digest()


def problem_key(problem: Problem, loss: str, solver: str, digests: list[bytes] | None = None) -> bytes:
    """A digest of everything that determines the problem's solution (two problems with the same
    key have the same bytes, and layout, in every array; -0.0 and 0.0 differ, which only costs a
    miss). ``digests``: the ``layout_key`` of each of ``_arrays(problem)``, when already taken."""
    h = xxhash.xxh3_128(f"{type(problem).__name__}|{loss}|{solver.upper()}".encode())
    for digest in digests if digests is not None else [layout_key(a) for a in _arrays(problem)]:
        h.update(digest)
    return h.digest()


class SolveMemo:
    """``solve`` with identical problems solved once (``enabled=False``: every problem solved,
    today's path), and each distinct Phi's Gram ``2 Phi'Phi`` built once: a grid's points that
    differ only in r share their Phi (eps-ABRF's tau, AGBoost's delta), and building H is most of
    a dense QP's preparation. ``solves``, ``hits`` and ``grams_reused`` count what it did."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._results: dict[bytes, SolveResult] = {}
        self._grams: dict[bytes, np.ndarray] = {}  # in order of use
        self._gram_bytes = 0
        self.solves = 0
        self.hits = 0
        self.grams_reused = 0

    def _gram_of(self, problem: Problem, key: bytes):
        """The lazily built (and kept) Gram of the problem's Phi, whose ``layout_key`` is ``key``, for
        ``solve``'s dense QP solvers."""
        if not isinstance(problem, LinearAttentionProblem):
            return None

        def build() -> np.ndarray:
            if key in self._grams:
                self.grams_reused += 1
                self._grams[key] = self._grams.pop(key)  # the most recently used last
                return self._grams[key]
            H = self._grams[key] = gram(problem.Phi)
            self._gram_bytes += H.nbytes
            while self._gram_bytes > GRAM_CACHE_BYTES and len(self._grams) > 1:
                self._gram_bytes -= self._grams.pop(next(iter(self._grams))).nbytes  # the least recently used
            return H

        return build

    def solve(
        self, problem: Problem, loss: str = "l2", solver: str = DEFAULT_SOLVER, remember: bool = True
    ) -> tuple[SolveResult, bool]:
        """(the result, whether it came from the memo). A hit is the stored result with its own
        copy of theta and 0 seconds (no time was spent); SolverError as ``solve`` raises it.

        ``remember=False``: the problem is solved as with the memo off, neither keyed nor kept (nor
        its Gram): for a family that never poses a problem twice (``Family.repeats_problems``;
        LARF's units found 0 repeats in 976 solves), whose keys would cost hashing every array and
        find nothing. The result is the same bytes either way (every backend is a pure function of
        its problem, and a Gram built afresh is the kept one's bytes)."""
        if not (self.enabled and remember):
            self.solves += 1
            return solve(problem, loss=loss, solver=solver), False
        digests = [layout_key(a) for a in _arrays(problem)]  # each array hashed once, Phi's reused for its Gram
        key = problem_key(problem, loss, solver, digests)
        stored = self._results.get(key)
        if stored is not None:
            self.hits += 1
            return replace(stored, theta=stored.theta.copy(), seconds=0.0), True
        self.solves += 1
        result = solve(problem, loss=loss, solver=solver, gram_of=self._gram_of(problem, digests[0]))
        self._results[key] = replace(result, theta=result.theta.copy())
        return result, False
