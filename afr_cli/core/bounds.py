"""What values a setting allows, declared once: an interval of numbers, a few named options, or
either of several.

Family and ensemble hyperparameters (``afr_cli.core.params.Param``) and config keys
(``afr_cli.config.schema.Key``) both hold one of these bounds, so a range is declared, checked and
put in words in one place (the idea of scikit-learn's ``Interval``/``StrOptions``). A bound knows:

- whether it accepts a value (:meth:`Bound.accepts`) and the value as it is then used
  (:meth:`Bound.convert`: an integer as ``int``, a number as ``float``);
- how to say what it allows (:meth:`Bound.allowed`: ``an integer >= 1``, ``a number in (0, 1)``,
  ``l2, l1``), on the reference page and in ``afr models`` alike;
- the one line that refuses a value (:meth:`Bound.check`): ``WHERE: VALUE is not a number; NAME
  must be ALLOWED`` for an interval (``is not allowed`` when the value is a number, or when the
  bound also allows text), ``WHERE: VALUE is not allowed; allowed: A, B`` for options.

The number tests at the bottom (``is_number``, ``in_interval`` ...) are shared by the few checks
that are not a declared bound (a loader's seed, a study's repetitions).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from afr_cli.errors import AfrInputError

# What an interval's numbers are (its "kind"):
INTEGER = "integer"  # an integer as YAML writes it (1.0 is not one), compared exactly at any size
WHOLE = "whole"  # any number of whole value (2.0 reads as 2): a hyperparameter's count
REAL = "real"  # any finite real number, used as a float
FLOAT = "float"  # a number written with a decimal point (1 is an integer, 1.0 a float), kept as it is
KINDS = (INTEGER, WHOLE, REAL, FLOAT)
CLOSED = ("both", "left", "right", "neither")  # which ends of an interval belong to it


class Bound(ABC):
    """The values a setting allows; subclasses say which, and in what words."""

    @abstractmethod
    def accepts(self, value: Any) -> bool:
        """Whether the value is allowed (after :meth:`normalize`)."""

    @abstractmethod
    def items(self, after_name: bool = False) -> list[str]:
        """What is allowed, as a list of alternatives in words (joined by :meth:`allowed`)."""

    def allowed(self, after_name: bool = False) -> str:
        """What is allowed, in words. ``after_name``: the words follow the setting's name ("eps
        must be in [0, 1]"), so a range of numbers needs no noun."""
        return _alternatives(self.items(after_name))

    @property
    def numeric(self) -> bool:
        """Whether every allowed value is a number or null (then a text value "is not a number")."""
        return True

    def normalize(self, value: Any) -> Any:
        """The value as it is compared (options matched in capitals take it in capitals)."""
        return value

    def convert(self, value: Any) -> Any:
        """An accepted value as it is used."""
        return value

    def refusal(self, value: Any, where: str, name: str = "") -> str:
        """The one line that refuses ``value`` at ``where`` (``name``: the setting, said before "must be")."""
        what = "is not a number" if self.numeric and not is_number(value) else "is not allowed"
        subject = f"{name} " if name else ""
        return f"{where}: {value!r} {what}; {subject}must be {self.allowed(after_name=bool(name))}"

    def check(self, value: Any, where: str, name: str = "") -> Any:
        """The value as it is used, or one AfrInputError naming ``where`` and what is allowed."""
        value = self.normalize(value)
        if not self.accepts(value):
            raise AfrInputError(self.refusal(value, where, name))
        return self.convert(value)


@dataclass(frozen=True)
class Interval(Bound):
    """Numbers of one ``kind`` between ``low`` and ``high`` (None: unbounded on that side);
    ``closed`` says which ends belong to it ("both", "left", "right" or "neither"), as in
    scikit-learn. ``noun`` replaces the kind's own word ("a fraction" for a float in (0, 1])."""

    kind: str
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    noun: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Interval kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.closed not in CLOSED:
            raise ValueError(f"Interval closed {self.closed!r}; allowed: {', '.join(CLOSED)}")

    @classmethod
    def between(
        cls,
        kind: str,
        low: float | None,
        high: float | None,
        low_open: bool = False,
        high_open: bool = False,
        noun: str = "",
    ) -> Interval:
        """An interval from open/closed flags per end (how ``Param(...)`` declares one)."""
        closed = {(False, False): "both", (False, True): "left", (True, False): "right", (True, True): "neither"}
        return cls(kind, low, high, closed[(low_open, high_open)], noun)

    @property
    def low_open(self) -> bool:
        return self.closed in ("right", "neither")

    @property
    def high_open(self) -> bool:
        return self.closed in ("left", "neither")

    def range_text(self) -> str:
        """The ends as a user reads them: 'in (0, 1]', '>= 1', '> 0', or '' when unbounded."""
        return interval_text(self.low, self.high, self.low_open, self.high_open)

    def accepts(self, value: Any) -> bool:
        if self.kind == INTEGER:
            return is_integer(value) and self._inside(value)
        if self.kind == FLOAT:
            return isinstance(value, (float, np.floating)) and self._inside(float(value))
        if not is_number(value):
            return False
        number = as_float(value)
        if self.kind == WHOLE and math.isfinite(number) and number != int(number):
            return False
        return self._inside(number)

    def _inside(self, number: float) -> bool:
        return in_interval(number, self.low, self.high, self.low_open, self.high_open)

    def convert(self, value: Any) -> Any:
        if self.kind == INTEGER:
            return int(value)
        if self.kind == WHOLE:
            return int(as_float(value))
        if self.kind == REAL:
            return as_float(value)
        return value  # FLOAT: as given (a numpy float stays one)

    def items(self, after_name: bool = False) -> list[str]:
        ends = self.range_text()
        if self.noun:
            noun = self.noun
        elif self.kind in (INTEGER, WHOLE):
            noun = "an integer"
        elif after_name and ends:
            return [ends]  # "eps must be in [0, 1]": the name says what it is
        elif self.low is None or self.high is None:
            noun = "a finite number"  # an open end does not let infinity in
        else:
            noun = "a number"
        return [f"{noun} {ends}".strip()]


@dataclass(frozen=True)
class Options(Bound):
    """A few named values (text, or None written null), matched exactly; ``upper``: text is
    matched in capitals (solver names)."""

    values: tuple
    upper: bool = False

    @property
    def numeric(self) -> bool:
        return all(v is None or is_number(v) for v in self.values)

    def normalize(self, value: Any) -> Any:
        return str(value).upper() if self.upper else value

    def accepts(self, value: Any) -> bool:
        return any(value is v or (isinstance(v, str) and isinstance(value, str) and value == v) for v in self.values)

    def items(self, after_name: bool = False) -> list[str]:
        return [show_value(v) for v in self.values]

    def allowed(self, after_name: bool = False) -> str:
        return ", ".join(self.items())

    def refusal(self, value: Any, where: str, name: str = "") -> str:
        return f"{where}: {value!r} is not allowed; allowed: {self.allowed()}"


@dataclass(frozen=True)
class AnyOf(Bound):
    """A value any of several bounds allows (an integer or null; a fraction, a count or a name),
    used as the first of them that accepts it says."""

    parts: tuple[Bound, ...]

    @property
    def numeric(self) -> bool:
        return all(part.numeric for part in self.parts)

    def accepts(self, value: Any) -> bool:
        return any(part.accepts(value) for part in self.parts)

    def convert(self, value: Any) -> Any:
        return next(part for part in self.parts if part.accepts(value)).convert(value)

    def items(self, after_name: bool = False) -> list[str]:
        return [item for part in self.parts for item in part.items(after_name)]


def _alternatives(items: list[str]) -> str:
    """'A', 'A or B', 'A, B or C'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def show_value(value: Any) -> str:
    """A value as configs write it: null for None, a number in ``%g``, text as it is."""
    if value is None:
        return "null"
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


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


def _end(value: float) -> str:
    """An end as written: an integer in full (4294967295, never 4.29497e+09), else ``%g``."""
    return str(value) if is_integer(value) else f"{value:g}"


def interval_text(low: float | None, high: float | None, low_open: bool = False, high_open: bool = False) -> str:
    """The bounds as a user reads them: 'in (0, 1]', '>= 1', '> 0', or '' when unbounded."""
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{_end(low)}, {_end(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {_end(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {_end(high)}"
    return ""
