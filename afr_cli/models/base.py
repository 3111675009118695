"""What every model family is: hyperparameters, features from forest tensors, a design, a prediction.

A family turns the shared per-fold tensors (``RowTensors``) into its features for given
*design* hyperparameters (they change Phi: tau, kappa, tau0, M), then, for given *mixing*
hyperparameters (they only rescale blocks: eps, gamma), into a ``LinearAttentionProblem``
for the one solver layer, and predicts from features and trained theta. The protocol reuses
features across the mixing sweep; the scikit-learn estimators call the same three methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from afr_cli.errors import AfrInputError
from afr_cli.forests import RowTensors
from afr_cli.solve import LinearAttentionProblem

DESIGN, MIXING = "design", "mixing"


@dataclass(frozen=True)
class Param:
    """One hyperparameter: its kind, default, allowed range and meaning."""

    name: str
    kind: str
    default: float
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    integer: bool = False
    doc: str = ""

    def allowed(self) -> str:
        """Human-readable domain, e.g. '[0, 1]', '> 0' or 'an integer >= 1'."""
        kind = "an integer " if self.integer else ""
        if self.low is not None and self.high is not None:
            left = "(" if self.low_open else "["
            return f"{kind}in {left}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"{kind}{'>' if self.low_open else '>='} {self.low:g}"
        return f"{kind or 'a number'}".strip()

    def check(self, value: Any, where: str) -> float:
        """The value as a number, or AfrInputError naming ``where`` and the allowed range."""
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise AfrInputError(f"{where}: {value!r} is not a number; {self.name} must be {self.allowed()}")
        v = float(value)
        bad = (not np.isfinite(v)
               or (self.integer and v != int(v))
               or (self.low is not None and (v <= self.low if self.low_open else v < self.low))
               or (self.high is not None and v > self.high))
        if bad:
            raise AfrInputError(f"{where}: {value!r} is not allowed; {self.name} must be {self.allowed()}")
        return int(v) if self.integer else v


EPS = Param("eps", MIXING, 0.5, 0.0, 1.0, doc="Huber contamination of the softmax tree attention")
TAU = Param("tau", DESIGN, 1.0, 0.0, None, low_open=True, doc="softmax temperature: softmax(-d / tau)")


class Family(ABC):
    """A model family: its math only (features, design, prediction); solving is shared."""

    name: ClassVar[str]
    summary: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()

    @classmethod
    def param(cls, name: str) -> Param:
        for p in cls.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @classmethod
    def design_names(cls) -> tuple[str, ...]:
        return tuple(p.name for p in cls.params if p.kind == DESIGN)

    @classmethod
    def mixing_names(cls) -> tuple[str, ...]:
        return tuple(p.name for p in cls.params if p.kind == MIXING)

    @abstractmethod
    def features(self, rows: RowTensors, design: Mapping[str, float]) -> Any:
        """Everything the family needs from the rows for these design values (cache on rows)."""

    @abstractmethod
    def training_problem(self, feats: Any, y: np.ndarray,
                         mixing: Mapping[str, float]) -> LinearAttentionProblem | None:
        """The problem whose solution is theta; None when nothing is trainable (e.g. eps = 0)."""

    @abstractmethod
    def predict(self, feats: Any, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        """Predictions for the rows behind ``feats`` with trained theta (None if untrained)."""

    def fitted_attributes(self, feats: Any, mixing: Mapping[str, float],
                          theta: np.ndarray | None) -> dict[str, np.ndarray]:
        """Named views of theta for the estimator (``w_`` etc.)."""
        return {}


def uniform(T: int) -> np.ndarray:
    return np.full(T, 1.0 / T)
