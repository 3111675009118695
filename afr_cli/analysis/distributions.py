"""The few distribution functions afr's tests need (Student t, normal, chi², F), on scipy.special.

Why not scipy.stats: importing it costs more CPU than pandas does (about 0.8 s on a loaded
2-core machine), and ``afr table --compare`` would pay that on every call for a handful of tail
probabilities and quantiles. scipy.special holds the same numerical routines
scipy.stats calls (``stdtr``, ``stdtrit``, ``ndtr``, ``chdtrc``, ``fdtrc``) and loads in a
fraction of the time; it is imported inside each function, so importing this module is free.

Each function is the scalar case of the scipy.stats method it replaces, with the same arithmetic
on the location and scale and the same answers at the edges (an infinite argument, a q of 0 or
1, NaN, a non-positive scale or degrees of freedom): the values are bit for bit scipy.stats'
(tests/test_distributions.py checks them against it).
"""

from __future__ import annotations

import math


def _valid(*positive: float) -> bool:
    """scipy.stats' argument check: every shape (and the scale) strictly positive (NaN is not)."""
    return all(v > 0 for v in positive)


def t_cdf(x: float, df: float, loc: float = 0.0, scale: float = 1.0) -> float:
    """P(T <= x) for Student's t with ``df`` degrees of freedom, located and scaled:
    ``scipy.stats.t.cdf(x, df, loc, scale)``."""
    if not _valid(df, scale):
        return math.nan
    z = (x - loc) / scale
    if math.isnan(z):
        return math.nan
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    from scipy import special

    return float(special.stdtr(df, z))


def t_sf(x: float, df: float, loc: float = 0.0, scale: float = 1.0) -> float:
    """P(T > x), computed as scipy does (the cdf at −x, not 1 − cdf: exact in the far tail):
    ``scipy.stats.t.sf(x, df, loc, scale)``."""
    if not _valid(df, scale):
        return math.nan
    z = (x - loc) / scale
    if math.isnan(z):
        return math.nan
    if math.isinf(z):
        return 0.0 if z > 0 else 1.0
    from scipy import special

    return float(special.stdtr(df, -z))


def t_ppf(q: float, df: float, loc: float = 0.0, scale: float = 1.0) -> float:
    """The q-quantile of Student's t: ``scipy.stats.t.ppf(q, df, loc, scale)`` (−inf at q = 0,
    inf at q = 1, NaN outside [0, 1])."""
    if not (_valid(df, scale) and loc == loc) or not 0.0 <= q <= 1.0:
        return math.nan
    if q == 0.0 or q == 1.0:
        return (-math.inf if q == 0.0 else math.inf) * scale + loc
    from scipy import special

    return float(special.stdtrit(df, q)) * scale + loc


def t_interval(level: float, df: float, loc: float = 0.0, scale: float = 1.0) -> tuple[float, float]:
    """The central ``level`` interval of Student's t: ``scipy.stats.t.interval(level, df, loc, scale)``."""
    if not 0.0 <= level <= 1.0:
        raise ValueError("level must be between 0 and 1 inclusive")
    return t_ppf((1.0 - level) / 2, df, loc, scale), t_ppf((1.0 + level) / 2, df, loc, scale)


def normal_sf(x: float) -> float:
    """P(Z > x) for the standard normal, as ndtr(−x): what scipy.stats' Wilcoxon and normal
    approximations use."""
    from scipy import special

    return float(special.ndtr(-x))


def chi2_sf(x: float, df: float) -> float:
    """P(X > x) for chi² with ``df`` degrees of freedom: ``scipy.stats.chi2.sf(x, df)``."""
    if not _valid(df) or math.isnan(x):
        return math.nan
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    from scipy import special

    return float(special.chdtrc(df, x))


def f_sf(x: float, dfn: float, dfd: float) -> float:
    """P(X > x) for Fisher's F with (``dfn``, ``dfd``) degrees of freedom: ``scipy.stats.f.sf``."""
    if not _valid(dfn, dfd) or math.isnan(x):
        return math.nan
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    from scipy import special

    return float(special.fdtrc(dfn, dfd, x))
