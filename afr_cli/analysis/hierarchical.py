"""The Bayesian hierarchical comparison of two models over datasets × repetitions, with a ROPE.

The model is that of Corani, Benavoli, Demšar, Mangili and Zaffalon (Machine Learning 2017,
"Statistical comparison of classifiers through Bayesian hierarchical modelling"), as baycomp's
``hierarchical-t-test.stan`` states it. For dataset i with n_i repetitions x_i (differences B − A):

- x_i ~ MVN(δ_i·1, σ_i²·M_i), M_i = (1 − ρ_i)·I + ρ_i·11ᵀ: the correlated likelihood of repeated
  splits, ρ_i = n_test / n (Nadeau and Bengio; the ρ of afr's per-dataset correlated t-test in
  :mod:`afr_cli.analysis.bayesian`);
- δ_i ~ Student-t(ν, δ0, σ0): the dataset means, drawn from a heavy-tailed population, so a noisy
  dataset is shrunk toward the others and an outlying one is not forced to them;
- hyperpriors: δ0 ~ U(−max|x|, max|x|), σ0 ~ U(0, 1000·sd_among), σ_i ~ U(0, 1000·sd_within),
  ν − 1 ~ Gamma(α, rate β), α ~ U(1, 2), β ~ U(0.01, 0.1).

As in baycomp, the differences (and the ROPE) are first divided by the mean over datasets of the
per-dataset standard deviation (so the bounds do not depend on the metric's unit), sd_within is
the mean per-dataset sd and sd_among the sd of the per-dataset means (both ddof 0), and a dataset
whose repetitions do not vary (its posterior would be improper) has its values replaced by
symmetric seeded noise within ±ROPE, as baycomp does, except that the dataset's mean is kept
(baycomp sets it to 0).

The answer is about the *next* dataset: δ_next ~ Student-t(ν, δ0, σ0). For each posterior draw the
mass of δ_next below −rope, inside [−rope, rope] and above rope is computed; ``probabilities`` is
the share of draws in which each region holds the most mass — baycomp's ``Posterior.probs`` and the
rule of afr's signed-rank test — and ``predictive`` the mean mass (the posterior predictive
probability). The posterior of δ0, the mean difference of the population, is reported in data units,
with ``population`` the posterior probability that δ0 lies below, inside or above the ROPE.
As in :mod:`afr_cli.analysis.bayesian`, "right" is B better for a score where higher is better; the callers
flip the sign for error metrics.

The sampler is a seeded, partially collapsed Gibbs sampler in numpy/scipy (no compiler, no
probabilistic-programming package): the Student-t is written as a scale mixture of normals
(δ_i ~ N(δ0, σ0²/λ_i), λ_i ~ Gamma(ν/2, ν/2)); σ_i, λ_i and δ_i are drawn exactly; σ0 and δ0 are
drawn with the δ_i integrated out (so a small σ0 does not trap the chain, the usual weakness of
centred hierarchical Gibbs); ν, α and β by univariate slice sampling (Neal 2003). Per dataset only
n_i, the mean and the sum of squares enter: with M's eigenvalues 1 + (n − 1)ρ (along 1) and 1 − ρ,
(x − δ1)ᵀM⁻¹(x − δ1) = SS/(1 − ρ) + n·(x̄ − δ)²/(1 + (n − 1)ρ). Datasets may have different numbers
of repetitions and different ρ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afr_cli.analysis.bayesian import DEFAULT_ROPE, RopeProbabilities

HIERARCHICAL_SAMPLES = 10_000
HIERARCHICAL_BURN_IN = 1_000
HIERARCHICAL_SEED = 0
UPPER_SIGMA = 1000.0  # baycomp's ``upper_sigma``: the σ bounds as multiples of the data's spread
ALPHA_BOUNDS = (1.0, 2.0)  # baycomp's lower_alpha, upper_alpha
BETA_BOUNDS = (0.01, 0.1)  # baycomp's lower_beta, upper_beta
MC_BATCHES = 50  # batch means for the Monte Carlo standard errors


@dataclass(frozen=True)
class HierarchicalResult:
    """The hierarchical test of B − A over ``n_datasets`` datasets with ROPE ±``rope_width``.

    ``probabilities``: share of posterior draws in which the next dataset's difference is most
    likely below / inside / above the ROPE (baycomp's answer); ``predictive``: the posterior
    predictive probability of each region; ``population``: the posterior probability that the
    population's mean difference δ0 lies below / inside / above the ROPE; ``mc_se``: Monte Carlo standard errors of
    ``probabilities`` (batch means). ``mean`` (with its Monte Carlo error ``mean_mc_se``) and the
    ``level`` credible interval are of δ0 and
    ``dataset_means`` the shrunk posterior means of the δ_i, all in the data's unit; ``scale`` is the
    divisor that made the data unit-free."""

    n_datasets: int
    repetitions: tuple[int, ...]
    rope_width: float
    probabilities: RopeProbabilities
    predictive: RopeProbabilities
    population: RopeProbabilities
    mc_se: RopeProbabilities
    mean: float
    mean_mc_se: float
    ci_low: float
    ci_high: float
    level: float
    dataset_means: tuple[float, ...]
    scale: float
    samples: int
    burn_in: int
    seed: int


_PROBABILITY_FIELDS = ("probabilities", "predictive", "population", "mc_se")
_INT_FIELDS = ("n_datasets", "samples", "burn_in", "seed")
_FLOAT_FIELDS = ("rope_width", "mean", "mean_mc_se", "ci_low", "ci_high", "level", "scale")


def result_to_json(result: HierarchicalResult) -> dict:
    """``result`` as plain JSON values (floats as Python writes them, so reading them back gives
    the same floats bit for bit): what afr_cli/tables/compare_memo.py keeps."""
    out: dict = {name: getattr(result, name) for name in (*_INT_FIELDS, *_FLOAT_FIELDS)}
    for name in _PROBABILITY_FIELDS:
        p = getattr(result, name)
        out[name] = [p.left, p.rope, p.right]
    out["repetitions"] = list(result.repetitions)
    out["dataset_means"] = list(result.dataset_means)
    return out


def result_from_json(data: dict) -> HierarchicalResult:
    """The result :func:`result_to_json` wrote; ValueError (or TypeError, KeyError) when ``data``
    is not one, so that a damaged memo is recomputed rather than printed."""

    def number(value: object, kind: type) -> float | int:
        if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
            raise ValueError(f"not a {kind.__name__}: {value!r}")
        return kind(value)

    def numbers(value: object, kind: type, length: int | None = None) -> tuple:
        if not isinstance(value, list) or (length is not None and len(value) != length):
            raise ValueError(f"not a list of {length or 'some'} numbers: {value!r}")
        return tuple(number(v, kind) for v in value)

    fields = set(_PROBABILITY_FIELDS) | set(_INT_FIELDS) | set(_FLOAT_FIELDS) | {"repetitions", "dataset_means"}
    if not isinstance(data, dict) or set(data) != fields:
        raise ValueError("not a hierarchical result")
    values: dict = {name: number(data[name], int) for name in _INT_FIELDS}
    values.update({name: number(data[name], float) for name in _FLOAT_FIELDS})
    values.update({name: RopeProbabilities(*numbers(data[name], float, 3)) for name in _PROBABILITY_FIELDS})
    values["repetitions"] = numbers(data["repetitions"], int, values["n_datasets"])
    values["dataset_means"] = numbers(data["dataset_means"], float, values["n_datasets"])
    return HierarchicalResult(**values)


@dataclass(frozen=True)
class HierarchicalDraws:
    """The kept posterior draws, unit-free (data divided by ``scale``): δ0, σ0, ν (one per draw)
    and δ (draws × datasets); with the scaled ROPE they give the next dataset's region masses.
    ``repetitions`` counts each dataset's values."""

    delta0: np.ndarray
    std0: np.ndarray
    nu: np.ndarray
    delta: np.ndarray
    scale: float
    rope: float
    repetitions: tuple[int, ...]


@dataclass(frozen=True)
class _Data:
    """Per-dataset sufficient statistics (unit-free) and the prior bounds baycomp derives."""

    n: np.ndarray  # repetitions
    mean: np.ndarray
    ss: np.ndarray  # sum of squares about the mean
    rho: np.ndarray
    c: np.ndarray  # 1 + (n − 1)ρ: the eigenvalue of M along 1
    delta_bound: float
    std_hi: float
    std0_hi: float


def _rows(diffs: Sequence[ArrayLike]) -> list[np.ndarray]:
    rows = [np.asarray(d, dtype=float).ravel() for d in diffs]
    if not rows:
        raise ValueError("no dataset to compare")
    for i, r in enumerate(rows):
        if r.size < 2:
            raise ValueError(f"dataset {i} has {r.size} repetition(s); the hierarchical test needs at least 2")
        if not np.all(np.isfinite(r)):
            raise ValueError(f"dataset {i} has a non-finite difference")
        with np.errstate(over="ignore"):
            squares = float(np.sum(np.square(r)))
        if not math.isfinite(squares):
            raise ValueError(
                f"dataset {i}'s differences reach {np.abs(r).max():.3g}: too large for their variance "
                f"to be a finite double; rescale the metric"
            )
    return rows


def _rhos(rho: float | Sequence[float], q: int) -> np.ndarray:
    out = np.broadcast_to(np.asarray(rho, dtype=float), (q,)).copy()
    if np.any(~(out >= 0.0) | ~(out < 1.0)):
        raise ValueError(f"rho must be in [0, 1), got {rho}")
    return out


def _prepare(
    rows: list[np.ndarray], rho: np.ndarray, rope: float, rng: np.random.Generator
) -> tuple[_Data, float, float]:
    """Scale the rows as baycomp does, jitter constant rows, and return the statistics, the scale
    and the scaled ROPE."""
    scale = float(np.mean([r.std() for r in rows]))
    rows = [r / scale for r in rows]
    rope_s = rope / scale
    for i, r in enumerate(rows):
        if r.std() == 0.0:
            half = r.size // 2
            noise = rng.uniform(-rope_s, rope_s, half)
            jitter = np.zeros(r.size)
            jitter[:half] = noise
            jitter[half : 2 * half] = -noise
            rows[i] = r + jitter
            if rows[i].std() == 0.0:
                raise ValueError(f"dataset {i} does not vary and the ROPE is 0: its posterior is improper")
    n = np.array([r.size for r in rows], dtype=float)
    mean = np.array([r.mean() for r in rows])
    ss = np.array([((r - r.mean()) ** 2).sum() for r in rows])
    std_within = float(np.mean([r.std() for r in rows]))
    std_among = float(mean.std()) if len(rows) > 1 else std_within
    if std_among == 0.0:  # every dataset has the same mean: bound σ0 by the within spread instead
        std_among = std_within
    data = _Data(
        n=n,
        mean=mean,
        ss=ss,
        rho=rho,
        c=1.0 + (n - 1.0) * rho,
        delta_bound=float(max(np.abs(r).max() for r in rows)),
        std_hi=UPPER_SIGMA * std_within,
        std0_hi=UPPER_SIGMA * std_among,
    )
    return data, scale, rope_s


def _slice(
    logp: Callable[[float], float],
    x0: float,
    width: float,
    lo: float,
    hi: float,
    rng: np.random.Generator,
    max_steps: int = 50,
) -> float:
    """One univariate slice-sampling update (Neal 2003, stepping out then shrinking) of a density
    on (lo, hi) whose log is ``logp``; ``x0`` must have finite ``logp``."""
    level = logp(x0) + math.log(rng.random())
    left = x0 - width * rng.random()
    right = left + width
    steps = max_steps
    while steps and left > lo and logp(left) > level:
        left -= width
        steps -= 1
    steps = max_steps
    while steps and right < hi and logp(right) > level:
        right += width
        steps -= 1
    left, right = max(left, lo), min(right, hi)
    while True:
        x = left + (right - left) * rng.random()
        if logp(x) > level:
            return x
        if x < x0:
            left = x
        else:
            right = x


def _upper_truncated_gamma(shape: np.ndarray, rate: np.ndarray, lower: float, rng: np.random.Generator) -> np.ndarray:
    """Gamma(shape, rate) draws conditioned on exceeding ``lower``, by inverting the upper tail."""
    from scipy import special  # in the functions, as in afr_cli/analysis/distributions.py: importing is free

    tail = special.gammaincc(shape, rate * lower)
    u = tail * (1.0 - rng.random(np.shape(shape)))  # in (0, tail]
    return special.gammainccinv(shape, u) / rate


def _truncated_normal(mean: float, sd: float, lo: float, hi: float, rng: np.random.Generator) -> float:
    """One N(mean, sd²) draw conditioned on (lo, hi), by inverting the CDF (on the far side of the
    mean, by symmetry, to keep precision in the tails)."""
    from scipy import special

    a, b = (lo - mean) / sd, (hi - mean) / sd
    flip = a > 0.0
    if flip:
        a, b = -b, -a
    pa, pb = special.ndtr(a), special.ndtr(b)
    z = float(special.ndtri(pa + (pb - pa) * rng.random()))
    z = min(max(z, a), b)
    return mean + sd * (-z if flip else z)


def _log_t_sum(z2: np.ndarray, nu: float) -> float:
    """Σ log Student-t(ν) density at standardized points with squares ``z2``, scale terms dropped."""
    return z2.size * (math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu)) - (nu + 1) / 2 * float(
        np.log1p(z2 / nu).sum()
    )


def _gibbs(data: _Data, samples: int, burn_in: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Run the sampler; return the kept δ0, σ0, ν and δ draws (unit-free)."""
    q = data.n.size
    n, xbar, c = data.n, data.mean, data.c
    ss_w = data.ss / (1.0 - data.rho)  # the within part of each quadratic form
    # start at the data: δ_i = x̄_i, δ0 = their mean, σ's at the observed spreads
    delta = xbar.copy()
    delta0 = float(np.clip(xbar.mean(), -data.delta_bound, data.delta_bound))
    std0 = float(min(max(xbar.std(), 1e-3), 0.5 * data.std0_hi)) if q > 1 else 1.0
    nu, alpha, beta = 30.0, 1.5, 0.05
    log_std0_hi = math.log(data.std0_hi)
    total = burn_in + samples
    keep_d0, keep_s0, keep_nu = np.empty(samples), np.empty(samples), np.empty(samples)
    keep_delta = np.empty((samples, q))
    for it in range(total):
        # ν | δ, δ0, σ0, α, β with λ integrated out; slice on u = log(ν − 1), prior Gamma(α, β)
        z2 = ((delta - delta0) / std0) ** 2

        def log_nu(u: float) -> float:
            m1 = math.exp(u)
            return _log_t_sum(z2, m1 + 1.0) + alpha * u - beta * m1

        nu = 1.0 + math.exp(_slice(log_nu, math.log(nu - 1.0), 1.0, -math.inf, math.inf, rng))
        # λ_i | ν, δ_i, δ0, σ0 (the scale mixture's weights)
        lam = rng.gamma((nu + 1.0) / 2.0, 2.0 / (nu + z2))
        # σ_i | δ_i: σ_i⁻² ~ Gamma((n − 1)/2, Q_i/2) above 1/σ_hi²
        quad = ss_w + n * (xbar - delta) ** 2 / c
        prec = _upper_truncated_gamma((n - 1.0) / 2.0, quad / 2.0, data.std_hi**-2, rng)
        var_mean = c / (n * prec)  # var of x̄_i given δ_i, σ_i
        # σ0 | δ0, λ, σ with δ integrated out: x̄_i ~ N(δ0, σ0²/λ_i + var_mean_i); slice on log σ0
        r2 = (xbar - delta0) ** 2

        def log_std0(u: float) -> float:
            v = math.exp(2.0 * u) / lam + var_mean
            return float(-0.5 * (np.log(v) + r2 / v).sum()) + u

        std0 = math.exp(_slice(log_std0, math.log(std0), 1.0, -math.inf, log_std0_hi, rng))
        # δ0 | σ0, λ, σ with δ integrated out: normal, truncated to its uniform prior's bounds
        w = 1.0 / (std0**2 / lam + var_mean)
        delta0 = _truncated_normal(
            float((w * xbar).sum() / w.sum()), 1.0 / math.sqrt(w.sum()), -data.delta_bound, data.delta_bound, rng
        )
        # δ_i | everything: the product of two normals
        p_prior, p_data = lam / std0**2, 1.0 / var_mean
        post_var = 1.0 / (p_prior + p_data)
        delta = post_var * (p_prior * delta0 + p_data * xbar) + np.sqrt(post_var) * rng.standard_normal(q)
        # α | ν, β and β | ν, α: the Gamma prior of ν − 1, on their uniform boxes
        m1 = nu - 1.0
        alpha = _slice(lambda a: a * math.log(beta) - math.lgamma(a) + a * math.log(m1), alpha, 0.5, *ALPHA_BOUNDS, rng)
        beta = _slice(lambda b: alpha * math.log(b) - b * m1, beta, 0.05, *BETA_BOUNDS, rng)
        if it >= burn_in:
            k = it - burn_in
            keep_d0[k], keep_s0[k], keep_nu[k] = delta0, std0, nu
            keep_delta[k] = delta
    return keep_d0, keep_s0, keep_nu, keep_delta


def hierarchical_draws(
    diffs: Sequence[ArrayLike],
    rho: float | Sequence[float],
    rope: float = DEFAULT_ROPE,
    samples: int = HIERARCHICAL_SAMPLES,
    burn_in: int = HIERARCHICAL_BURN_IN,
    seed: int = HIERARCHICAL_SEED,
) -> HierarchicalDraws:
    """Posterior draws of the hierarchical model for per-dataset differences ``diffs`` (one
    sequence of B − A per dataset, one value per repetition) with correlation ``rho`` (one value,
    or one per dataset). Raises ValueError on bad input (no dataset, a dataset with fewer than two
    repetitions or a non-finite value, ρ outside [0, 1), a negative ROPE, every dataset constant,
    a constant dataset with a zero ROPE);
    the same ``seed`` always gives the same draws."""
    if rope < 0:
        raise ValueError(f"rope must be >= 0, got {rope}")
    if samples < MC_BATCHES or burn_in < 0:
        raise ValueError(f"need samples >= {MC_BATCHES} and burn_in >= 0, got {samples}, {burn_in}")
    rows = _rows(diffs)
    rhos = _rhos(rho, len(rows))
    if all(r.std() == 0.0 for r in rows):
        raise ValueError("no dataset's differences vary: the data give no scale for the hierarchical model")
    rng = np.random.default_rng(seed)
    data, scale, rope_s = _prepare(rows, rhos, rope, rng)
    d0, s0, nu, delta = _gibbs(data, samples, burn_in, rng)
    return HierarchicalDraws(d0, s0, nu, delta, scale, rope_s, tuple(int(r.size) for r in rows))


def region_masses(draws: HierarchicalDraws) -> np.ndarray:
    """Per draw, the next dataset's mass below, inside and above the (scaled) ROPE: draws × 3."""
    # Student-t(ν, δ0, σ0) CDF by scipy.special.stdtr (scipy.stats costs a second to import)
    from scipy import special

    left = special.stdtr(draws.nu, (-draws.rope - draws.delta0) / draws.std0)
    right = special.stdtr(draws.nu, (draws.delta0 - draws.rope) / draws.std0)
    return np.stack([left, np.clip(1.0 - left - right, 0.0, 1.0), right], axis=1)


def _population_shares(draws: HierarchicalDraws) -> np.ndarray:
    """The share of draws in which δ0 lies below, inside and above the (scaled) ROPE: the posterior
    probability of each event for the population's mean difference."""
    d0 = draws.delta0
    left = float(np.mean(d0 < -draws.rope))
    right = float(np.mean(d0 > draws.rope))
    return np.array([left, max(0.0, 1.0 - left - right), right])


def _winner_share(masses: np.ndarray) -> np.ndarray:
    top = masses == masses.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def batch_se(values: np.ndarray, batches: int = MC_BATCHES) -> np.ndarray:
    """Monte Carlo standard error of the mean of each column of ``values`` (draws × k) by
    non-overlapping batch means: it allows for the autocorrelation of a Markov chain."""
    size = values.shape[0] // batches
    means = values[: size * batches].reshape(batches, size, -1).mean(axis=1)
    return means.std(axis=0, ddof=1) / math.sqrt(batches)


def hierarchical_test(
    diffs: Sequence[ArrayLike],
    rho: float | Sequence[float],
    rope: float = DEFAULT_ROPE,
    samples: int = HIERARCHICAL_SAMPLES,
    burn_in: int = HIERARCHICAL_BURN_IN,
    seed: int = HIERARCHICAL_SEED,
    level: float = 0.95,
) -> HierarchicalResult:
    """The hierarchical test of B − A (``diffs``: one sequence per dataset, one value per
    repetition; ``rho`` = n_test / n, one value or one per dataset) with ROPE ±``rope`` in the data's
    unit. See the module docstring for the model; errors as :func:`hierarchical_draws`."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    draws = hierarchical_draws(diffs, rho, rope, samples, burn_in, seed)
    return summarise(draws, rope, level, burn_in, seed)


def summarise(draws: HierarchicalDraws, rope: float, level: float, burn_in: int, seed: int) -> HierarchicalResult:
    """The result :func:`hierarchical_test` reports, from the draws it made (``rope`` in data units)."""
    samples = draws.delta0.size
    masses = region_masses(draws)
    share = _winner_share(masses)
    mean_diff = draws.delta0 * draws.scale
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(mean_diff, [tail, 1.0 - tail])
    return HierarchicalResult(
        n_datasets=draws.delta.shape[1],
        repetitions=draws.repetitions,
        rope_width=rope,
        probabilities=RopeProbabilities(*(float(v) for v in share.mean(axis=0))),
        predictive=RopeProbabilities(*(float(v) for v in masses.mean(axis=0))),
        population=RopeProbabilities(*(float(v) for v in _population_shares(draws))),
        mc_se=RopeProbabilities(*(float(v) for v in batch_se(share))),
        mean=float(mean_diff.mean()),
        mean_mc_se=float(batch_se(mean_diff[:, None])[0]),
        ci_low=float(low),
        ci_high=float(high),
        level=level,
        dataset_means=tuple(float(v) for v in draws.delta.mean(axis=0) * draws.scale),
        scale=draws.scale,
        samples=samples,
        burn_in=burn_in,
        seed=seed,
    )
