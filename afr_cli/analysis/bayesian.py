"""Bayesian comparisons of two models with a region of practical equivalence (ROPE), after
Benavoli, Corani, Demšar and Zaffalon (JMLR 2017, "Time for a change: a tutorial for comparing
multiple classifiers through Bayesian analysis").

- Across datasets, the Bayesian signed-rank test: a Dirichlet process posterior over the
  distribution of the per-dataset differences (prior strength ``s = 0.5`` on one pseudo-observation
  at 0, as in the authors' tutorial code), sampled; for each sample the mass of pairwise means
  (z_i + z_j)/2 below −rope, inside [−rope, rope] and above rope. The three probabilities are the
  share of samples in which each region holds the most mass (ties split), as the tutorial reports.
  A fixed seed makes them the same on every run.
- On one dataset, the Bayesian correlated t-test (Corani and Benavoli 2015) over the repeated
  random splits: the posterior of the mean difference is Student t with n − 1 degrees of freedom,
  location mean(d) and scale sqrt((1/n + ρ/(1 − ρ)) · var(d)), where ρ = n_test / n is Nadeau and
  Bengio's correlation of overlapping training sets. It is closed form: no sampling.

Differences are B − A throughout, so "right" (above the ROPE) means B better for a score where
higher is better; the callers flip the sign for error metrics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import ThreadpoolController

from afr_cli.analysis.distributions import t_cdf, t_interval, t_sf
from afr_cli.analysis.rope import DEFAULT_ROPE  # ±0.01 on R², the stated default (its own module, for the options)

SIGNED_RANK_PRIOR = 0.5  # weight of the pseudo-observation at 0 (Benavoli et al.'s tutorial)
SIGNED_RANK_SAMPLES = 50_000
SIGNED_RANK_SEED = 0


@dataclass(frozen=True)
class RopeProbabilities:
    """Posterior probabilities that B − A lies below the ROPE (A better), inside it (practically
    equivalent) or above it (B better); they sum to 1."""

    left: float
    rope: float
    right: float


@dataclass(frozen=True)
class SignedRankResult:
    """The Bayesian signed-rank test of B − A over n datasets with ROPE ±``rope``."""

    n: int
    rope_width: float
    probabilities: RopeProbabilities
    samples: int
    seed: int


def signed_rank_test(
    diff: ArrayLike,
    rope: float = DEFAULT_ROPE,
    samples: int = SIGNED_RANK_SAMPLES,
    seed: int = SIGNED_RANK_SEED,
    prior: float = SIGNED_RANK_PRIOR,
) -> SignedRankResult:
    """Bayesian signed-rank test of the per-dataset differences ``diff`` (B − A) with ROPE ±``rope``.

    NaN probabilities for an empty ``diff`` or one holding a NaN (an undefined difference is not
    left out silently); the same ``seed`` always gives the same result."""
    z = np.asarray(diff, dtype=float).ravel()
    if rope < 0:
        raise ValueError(f"rope must be >= 0, got {rope}")
    if z.size == 0 or np.isnan(z).any():
        nan = RopeProbabilities(math.nan, math.nan, math.nan)
        return SignedRankResult(int(z.size), rope, nan, samples, seed)
    z = np.concatenate(([0.0], z))
    draws = _dirichlet_draws(z.size, samples, seed, prior)  # samples × (n + 1)
    pair_sum = z[:, None] + z[None, :]
    masses = np.empty((samples, 3))
    # BLAS on one thread: a product this small costs several times the CPU on two threads (they
    # wait for each other on a loaded machine), and gives the same floats: the threads split the
    # rows of the product, each element is one dot product either way
    with _blas_controller().limit(limits=1, user_api="blas"):
        for column, region in enumerate((pair_sum < -2 * rope, np.abs(pair_sum) <= 2 * rope, pair_sum > 2 * rope)):
            # each draw's w' R w, as (W R) * W summed by row: a matrix product on BLAS (an unoptimised
            # three-operand einsum took 1.7 s per test at 199 datasets; the masses agree to 1e-15).
            # One product per region: the three regions side by side in one product round differently.
            masses[:, column] = ((draws @ region.astype(float)) * draws).sum(axis=1)
    return SignedRankResult(int(z.size - 1), rope, RopeProbabilities(*_top_shares(masses)), samples, seed)


@lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    """The process's thread pools, found once (each search walks every loaded library: ~10 ms)."""
    return ThreadpoolController()


@lru_cache(maxsize=2)
def _dirichlet_draws(size: int, samples: int, seed: int, prior: float) -> np.ndarray:
    """The posterior's weight draws (read-only): they depend on the number of datasets, not on the
    differences, so every base of a comparison with as many datasets shares one set of draws."""
    weights = np.concatenate(([prior], np.ones(size - 1)))
    draws = np.random.default_rng(seed).dirichlet(weights, samples)
    draws.setflags(write=False)
    return draws


def _top_shares(masses: np.ndarray) -> tuple[float, float, float]:
    """Per region, the share of draws in which it holds the most mass, a tie split evenly.

    Without a tie each draw counts 1 for one region, and the counts over the draws are what the
    split (a mean of 0s and 1s) sums to exactly; with a tie the split is computed as it reads."""
    top = masses == masses.max(axis=1, keepdims=True)
    winners = top.sum(axis=1)
    if np.all(winners == 1):
        share = top.sum(axis=0) / masses.shape[0]
    else:
        share = (top / winners[:, None]).mean(axis=0)
    return tuple(float(v) for v in share)


@dataclass(frozen=True)
class CorrelatedTTestResult:
    """Posterior of the mean of B − A on one dataset from its repeated splits (Student t)."""

    n: int
    rho: float
    mean: float
    scale: float
    df: int
    rope_width: float
    probabilities: RopeProbabilities
    ci_low: float
    ci_high: float


def correlated_ttest(
    diff: ArrayLike, rho: float, rope: float = DEFAULT_ROPE, level: float = 0.95
) -> CorrelatedTTestResult:
    """Bayesian correlated t-test of the per-repetition differences ``diff`` (B − A) on one
    dataset, ρ = n_test / n; the ``level`` interval is the central posterior (credible) interval,
    the Nadeau-Bengio corrected interval. With zero variance the posterior is a point at the mean;
    with fewer than two repetitions there is none (NaN)."""
    d = np.asarray(diff, dtype=float)
    n = int(d.size)
    if not 0.0 <= rho < 1.0:
        raise ValueError(f"rho must be in [0, 1), got {rho}")
    if n < 2:
        nan = RopeProbabilities(math.nan, math.nan, math.nan)
        return CorrelatedTTestResult(
            n, rho, float(d.mean()) if n else math.nan, math.nan, max(n - 1, 0), rope, nan, math.nan, math.nan
        )
    mean = float(d.mean())
    scale = math.sqrt((1.0 / n + rho / (1.0 - rho)) * float(d.var(ddof=1)))
    if scale == 0.0:
        where = (mean < -rope, -rope <= mean <= rope, mean > rope)
        probs = RopeProbabilities(*(float(w) for w in where))
        return CorrelatedTTestResult(n, rho, mean, 0.0, n - 1, rope, probs, mean, mean)
    # the posterior Student t(n − 1, loc = mean, scale) by scipy.special (afr_cli.analysis.distributions),
    # the same floats scipy.stats.t gives without importing scipy.stats (its import costs more than pandas)
    left = t_cdf(-rope, n - 1, mean, scale)
    right = t_sf(rope, n - 1, mean, scale)
    low, high = t_interval(level, n - 1, mean, scale)
    return CorrelatedTTestResult(
        n, rho, mean, scale, n - 1, rope, RopeProbabilities(left, max(0.0, 1.0 - left - right), right), low, high
    )
