"""Hyperparameters of families and ensembles: kind, default, allowed domain, and the check that
turns a config value into a number (or one of a few named choices) with a one-line error."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from afr_cli.errors import AfrInputError

DESIGN, MIXING = "design", "mixing"
ENSEMBLE = "ensemble"  # a parameter of a base ensemble (tree count, depth, learning rate, ...)


@dataclass(frozen=True)
class Param:
    """One hyperparameter: its kind, default, allowed range, named choices and meaning.

    ``choices`` are non-numeric values accepted as they are (e.g. None for "no depth limit",
    "sqrt" for max_features); everything else must be a number in the range.
    """

    name: str
    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    integer: bool = False
    doc: str = ""
    choices: tuple = ()
    high_open: bool = False

    def allowed(self) -> str:
        """Human-readable domain, e.g. '[0, 1]', '> 0' or 'an integer >= 1'."""
        bounds = interval_text(self.low, self.high, self.low_open, self.high_open)
        if self.integer:
            text = f"an integer {bounds}".strip()
        else:
            text = bounds or "a number"
        return text + "".join(f" or {_show(c)}" for c in self.choices)

    def check(self, value: Any, where: str) -> Any:
        """The value as a number (or a named choice), or AfrInputError naming ``where`` and the domain."""
        if any(value is c or (isinstance(c, str) and value == c) for c in self.choices):
            return value
        if not is_number(value):
            raise AfrInputError(f"{where}: {value!r} is not a number; {self.name} must be {self.allowed()}")
        v = as_float(value)
        if (self.integer and np.isfinite(v) and v != int(v)) or not in_interval(
            v, self.low, self.high, self.low_open, self.high_open
        ):
            raise AfrInputError(f"{where}: {value!r} is not allowed; {self.name} must be {self.allowed()}")
        return int(v) if self.integer else v

    def show_default(self) -> str:
        """The default as configs and ``afr models`` write it (null for None)."""
        return _show(self.default)


def is_number(value: Any) -> bool:
    """A real number as YAML or numpy gives one; True/False are not numbers (YAML's ``yes`` is a bool)."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


def is_integer(value: Any) -> bool:
    """An integer as YAML or numpy gives one (1.0 is not one; True/False are not either)."""
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def as_float(value: Any) -> float:
    """A number as a float; an integer too large for one is ±inf (then refused as not finite)
    rather than an OverflowError (YAML reads ``99999999999999999999999...`` as an int)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def in_interval(
    value: float, low: float | None, high: float | None, low_open: bool = False, high_open: bool = False
) -> bool:
    """Whether a number is finite and within the bounds (None: unbounded on that side). An
    integer is compared exactly, whatever its size (numpy cannot take one past 64 bits)."""
    finite = is_integer(value) or bool(np.isfinite(value))
    return bool(
        finite
        and (low is None or (value > low if low_open else value >= low))
        and (high is None or (value < high if high_open else value <= high))
    )


def _bound(value: float) -> str:
    """A bound as written: an integer in full (4294967295, never 4.29497e+09), else ``%g``."""
    return str(value) if is_integer(value) else f"{value:g}"


def interval_text(low: float | None, high: float | None, low_open: bool = False, high_open: bool = False) -> str:
    """The bounds as a user reads them: 'in (0, 1]', '>= 1', '> 0', or '' when unbounded."""
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{_bound(low)}, {_bound(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {_bound(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {_bound(high)}"
    return ""


def _show(value: Any) -> str:
    if value is None:
        return "null"
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class FeaturesParam(Param):
    """scikit-learn's ``max_features``: a fraction in (0, 1] (a float), a count >= 1 (an integer),
    sqrt or log2. Integer and float stay distinct: 1 is one feature, 1.0 all of them."""

    def allowed(self) -> str:
        return "a fraction in (0, 1], an integer >= 1, sqrt or log2"

    def show_default(self) -> str:
        return repr(self.default)  # 1.0 (all features) is not 1 (one feature)

    def check(self, value: Any, where: str) -> Any:
        ok = (
            value in ("sqrt", "log2")
            or (isinstance(value, (float, np.floating)) and 0 < value <= 1)
            or (is_integer(value) and value >= 1)
        )
        if not ok:
            raise AfrInputError(f"{where}: {value!r} is not allowed; {self.name} must be {self.allowed()}")
        return value
