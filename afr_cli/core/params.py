"""Hyperparameters of families and ensembles: kind, default, the values allowed, and the check that
turns a config value into a number (or one of a few named choices) with a one-line error.

What a parameter allows is a bound of ``afr_cli.core.bounds`` (the one declaration config keys
share); ``Param(...)`` still takes the range the way families and plugins declare it (low, high,
open ends, integer, choices) and builds that bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from afr_cli.core.bounds import (
    FLOAT,
    INTEGER,
    REAL,
    WHOLE,
    AnyOf,
    Bound,
    Interval,
    Options,
    as_float,
    in_interval,
    interval_text,
    is_integer,
    is_number,
    show_value,
)

__all__ = [
    "DESIGN",
    "ENSEMBLE",
    "MIXING",
    "FeaturesParam",
    "Param",
    "as_float",
    "in_interval",
    "interval_text",
    "is_integer",
    "is_number",
]

DESIGN, MIXING = "design", "mixing"
ENSEMBLE = "ensemble"  # a parameter of a base ensemble (tree count, depth, learning rate, ...)


@dataclass(frozen=True, init=False)
class Param:
    """One hyperparameter: its name, kind (DESIGN, MIXING or ENSEMBLE), default, the values it
    allows (``bound``) and its meaning (``doc``).

    Declared as families and plugins always have: ``Param(name, kind, default, low, high,
    low_open=..., high_open=..., integer=..., choices=..., doc=...)``, where ``choices`` are
    non-numeric values accepted as they are (e.g. None for "no depth limit") and everything else
    must be a number in the range (an integer: any number of whole value, 2.0 reads as 2). A bound
    of ``afr_cli.core.bounds`` may be given instead, as ``bound=``.
    """

    name: str
    kind: str
    default: Any
    bound: Bound
    doc: str
    # False: a model that does not set it leaves it out of its grid, so the stored hyperparameters
    # of every run made before the parameter existed and of every run that keeps its default agree
    # (the families read the default themselves)
    recorded_by_default: bool

    def __init__(
        self,
        name: str,
        kind: str,
        default: Any,
        low: float | None = None,
        high: float | None = None,
        low_open: bool = False,
        integer: bool = False,
        doc: str = "",
        choices: tuple = (),
        high_open: bool = False,
        *,
        bound: Bound | None = None,
        recorded_by_default: bool = True,
    ) -> None:
        if bound is None:
            bound = Interval.between(WHOLE if integer else REAL, low, high, low_open, high_open)
            if choices:
                bound = AnyOf((bound, Options(tuple(choices))))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "bound", bound)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(self, "recorded_by_default", recorded_by_default)

    def allowed(self) -> str:
        """What is allowed, as it follows the name: '[0, 1]', '> 0', 'an integer >= 1 or null'."""
        return self.bound.allowed(after_name=True)

    def check(self, value: Any, where: str) -> Any:
        """The value as a number (or a named choice), or AfrInputError naming ``where``, the
        parameter and what it allows."""
        return self.bound.check(value, where, self.name)

    def show_default(self) -> str:
        """The default as configs and ``afr models`` write it (null for None)."""
        return show_value(self.default)


# scikit-learn's max_features: a float is a fraction of the features, an integer a count of them.
FEATURES = AnyOf(
    (
        Interval(FLOAT, 0, 1, closed="right", noun="a fraction"),
        Interval(INTEGER, 1, None),
        Options(("sqrt", "log2")),
    )
)


@dataclass(frozen=True, init=False)
class FeaturesParam(Param):
    """scikit-learn's ``max_features``: a fraction in (0, 1] (a float), a count >= 1 (an integer),
    sqrt or log2. Integer and float stay distinct: 1 is one feature, 1.0 all of them."""

    def __init__(self, name: str, kind: str, default: Any, doc: str = "") -> None:
        super().__init__(name, kind, default, doc=doc, bound=FEATURES)

    def show_default(self) -> str:
        return repr(self.default)  # 1.0 (all features) is not 1 (one feature)
