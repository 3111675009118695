"""The one rule for "ours agrees with the paper", used by every table, count and claim.

- **as printed**: our value, rounded half-up to the number of decimals the paper printed,
  equals the printed number (``0.8454`` agrees with a printed ``0.845``; ``0.8455`` does not);
- **within tolerance**: the raw, unrounded difference |ours − paper| is at most 0.02 on R² and
  at most 5 % of the paper's value on MAE/RMSE (or one ``--tol`` for every metric);
  a tuning-parameter row (eps_opt, tau0, ...) agrees only when equal;
- **miss**: neither.
"""

from __future__ import annotations

import math

from afr_cli.errors import AfrInputError

R2_TOL = 0.02
ERROR_REL_TOL = 0.05
AS_PRINTED, WITHIN_TOL, MISS, NO_VALUE = "as printed", "within tol", "miss", "n/a"
RULE = (
    "as printed: ours rounded half-up to the paper's printed decimals equals the printed number; "
    f"within tol: |ours − paper| on the raw difference <= {R2_TOL:g} on R², <= {ERROR_REL_TOL:.0%} of "
    "the paper's value on MAE/RMSE (parameters: equal)"
)


def as_printed(ours: float, printed: str) -> bool:
    """Whether ``ours`` rounds (half up) to the published string at the digits the paper printed."""
    try:
        float(printed)
    except ValueError:
        return False
    if ours is None or not math.isfinite(ours):
        return False
    from afr_cli.analysis.stats import matches_printed  # here: scipy.stats is for the tests, not for reading a table

    return matches_printed(printed.strip(), float(ours))


def check_tolerance(tol: float) -> float:
    """``--tol`` as given, or one line refusing it: a tolerance is a finite number >= 0 (NaN
    would star every cell, a negative one too), as ``--rope`` is."""
    if not (isinstance(tol, (int, float)) and not isinstance(tol, bool) and math.isfinite(tol) and tol >= 0):
        raise AfrInputError(f"--tol: {tol!r} is not allowed; a finite number >= 0 (in the metric's unit)")
    return tol


def tolerance(metric: str, published: float, tol: float | None = None) -> float:
    """The allowed |ours − paper| for one cell (module docstring)."""
    if tol is not None:
        return tol
    return R2_TOL if metric == "r2" else ERROR_REL_TOL * abs(published)


def within_tolerance(
    metric: str, diff: float, published: float, tol: float | None = None, is_param: bool = False
) -> bool:
    """Whether a raw difference to the paper is within the agreement rule's tolerance for ``metric``
    (``tol`` overrides it; a hyperparameter row must be equal)."""
    if is_param:
        return math.isclose(diff, 0.0, abs_tol=1e-12)
    return abs(diff) <= tolerance(metric, published, tol) + 1e-12


def agreement(ours: float, printed: str, metric: str, tol: float | None = None, is_param: bool = False) -> str:
    """as printed / within tol / miss for one cell ('n/a' without a value of ours)."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return NO_VALUE
    if not is_param and as_printed(ours, printed):
        return AS_PRINTED
    published = float(printed)
    if within_tolerance(metric, ours - published, published, tol, is_param):
        return AS_PRINTED if is_param else WITHIN_TOL
    return MISS


def tolerance_legend(tol: float | None) -> str:
    """The one-line legend under a comparison table: what Δ and * mean at this tolerance."""
    rule = (
        f"|Δ| > {tol:g}"
        if tol is not None
        else f"|Δ| > {R2_TOL:g} for R², > {ERROR_REL_TOL:.0%} of the paper's value for MAE/RMSE"
    )
    return f"Δ = ours − paper; * outside tolerance ({rule}; parameters must be equal); n/a: no result of ours"
