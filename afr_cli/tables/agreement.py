"""The one rule for "ours agrees with the paper", used by every table, count and claim.

- **as printed**: our value, rounded half-up to the number of decimals the paper printed,
  equals the printed number (``0.8454`` agrees with a printed ``0.845``; ``0.8455`` does not);
- **within tolerance**: the raw, unrounded difference |ours − paper| is at most 0.02 on R² and
  at most 5 % of the paper's value on MAE/RMSE (or one ``--tol`` for every metric);
- **a tuning-parameter row** (eps_opt, tau0, ...) has no tolerance: it agrees (as printed) when
  ours, rounded half-up to the decimals the paper prints for that parameter in the table (the
  most any of its cells there has), is the printed number (our 1/9 agrees with a printed
  ``0.111``). The paper prints a chosen grid value at a few decimals, so exact equality would
  count an identical choice as a miss; the column's decimals, not the cell's, because a printed
  ``1`` among ``0.25`` and ``0.75`` is the grid value 1, which our 0.75 is not;
- **miss**: neither.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from afr_cli.errors import AfrInputError

R2_TOL = 0.02
ERROR_REL_TOL = 0.05
AS_PRINTED, WITHIN_TOL, MISS, NO_VALUE = "as printed", "within tol", "miss", "n/a"
RULE = (
    "as printed: ours rounded half-up to the paper's printed decimals equals the printed number; "
    f"within tol: |ours − paper| on the raw difference <= {R2_TOL:g} on R², <= {ERROR_REL_TOL:.0%} of "
    "the paper's value on MAE/RMSE (parameters: ours rounded to the decimals the paper prints for the "
    "parameter in the table equals the printed number)"
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


def param_agrees(ours: float, printed: str, places: int | None = None) -> bool:
    """Whether a tuning-parameter cell agrees: ours, rounded half-up to ``places`` decimals (the
    most the paper prints for this parameter in the table; the cell's own without it), is the
    printed number (module docstring)."""
    try:
        shown = Decimal(printed.strip().replace("−", "-"))
    except (InvalidOperation, AttributeError):
        return False
    if not shown.is_finite() or ours is None or not math.isfinite(ours):
        return False
    digits = max(-shown.as_tuple().exponent, places or 0)
    return Decimal(repr(float(ours))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP) == shown


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


def within_tolerance(metric: str, diff: float, published: float, tol: float | None = None) -> bool:
    """Whether a raw difference to the paper is within the agreement rule's tolerance for ``metric``
    (``tol`` overrides it). Parameter rows have no tolerance: ``param_agrees``."""
    return abs(diff) <= tolerance(metric, published, tol) + 1e-12


def agreement(
    ours: float,
    printed: str,
    metric: str,
    tol: float | None = None,
    is_param: bool = False,
    places: int | None = None,
) -> str:
    """as printed / within tol / miss for one cell ('n/a' without a value of ours); ``places``:
    the decimals of the paper's column, for a parameter row (``param_agrees``)."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return NO_VALUE
    if is_param:
        return AS_PRINTED if param_agrees(ours, printed, places) else MISS
    if as_printed(ours, printed):
        return AS_PRINTED
    published = float(printed)
    if within_tolerance(metric, ours - published, published, tol):
        return WITHIN_TOL
    return MISS


def tolerance_legend(tol: float | None) -> str:
    """The one-line legend under a comparison table: what Δ and * mean at this tolerance."""
    rule = (
        f"|Δ| > {tol:g}"
        if tol is not None
        else f"|Δ| > {R2_TOL:g} for R², > {ERROR_REL_TOL:.0%} of the paper's value for MAE/RMSE"
    )
    return (
        f"Δ = ours − paper; * outside tolerance ({rule}; parameters: ours at the paper's printed "
        "decimals is not the printed number); n/a: no result of ours"
    )
