"""What every model family is: hyperparameters, features from forest tensors, a design, a prediction.

A family turns the shared per-fold tensors (``RowTensors``) into its features for given
*design* hyperparameters (they change Phi: tau, kappa, tau0, M), then, for given *mixing*
hyperparameters (they only rescale blocks: eps, gamma), into a ``LinearAttentionProblem``
for the one solver layer, and predicts from features and trained theta. The protocol reuses
features across the mixing sweep; the scikit-learn estimators call the same three methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from afr_cli.core.bounds import AnyOf, Options
from afr_cli.core.params import DESIGN, MIXING, Param
from afr_cli.ensembles import AVERAGE
from afr_cli.ensembles.leaf_statistics import RowTensors
from afr_cli.solvers.solve import LinearAttentionProblem

EPS = Param("eps", MIXING, 0.5, 0.0, 1.0, doc="Huber contamination of the softmax tree attention")
TAU = Param("tau", DESIGN, 1.0, 0.0, None, low_open=True, doc="softmax temperature: softmax(-d / tau)")

# A family's readings: its paper's text (the default) or its authors' public code, where the two
# compute different models (docs/models.md, "Two readings").
TEXT, CODE = "text", "code"


@dataclass(frozen=True)
class CodeDifference:
    """One place where a family's authors' public code computes something other than its paper's
    text: ``what`` it is, the ``text``'s computation, the ``code``'s, and ``where`` in the code
    (file:lines of the repository and commit the family's ``code_source`` names)."""

    what: str
    text: str
    code: str
    where: str


def reading_param(code: str) -> Param:
    """The design parameter ``reading``: text (the paper's equations) or code (``code`` says what
    the authors' public code computes instead)."""
    return Param(
        "reading",
        DESIGN,
        TEXT,
        bound=AnyOf((Options((TEXT, CODE)),)),
        doc=f"whose computation: text (the paper's equations) or code (the authors' public code: {code}; "
        "docs/models.md)",
        recorded_by_default=False,  # stored only where a config sets it: the text reading's rows stay as before
    )


class Family(ABC):
    """A model family: its math only (features, design, prediction); solving is shared."""

    name: ClassVar[str]
    summary: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()
    # the ensemble structures it can attend over (afr_cli.ensembles: "average" forests, "boosted" GBMs)
    structures: ClassVar[tuple[str, ...]] = (AVERAGE,)
    # Whether a unit can pose one of its problems twice (two grid points, stages or models with the
    # same bytes). False: the solve memo neither keys nor keeps its problems (``SolveMemo.solve``),
    # since hashing them would find nothing. Only speed depends on it: a problem solved again gives
    # the same bytes, so a family that says False and does repeat a problem loses time, never a bit.
    repeats_problems: ClassVar[bool] = True
    # The authors' public code ("owner/name@commit") and where it computes another model than the
    # paper's text; a family that has them takes ``reading: code`` (``reading_param``).
    code_source: ClassVar[str] = ""
    code_differences: ClassVar[tuple[CodeDifference, ...]] = ()

    @classmethod
    def param(cls, name: str) -> Param:
        """The hyperparameter called ``name`` (KeyError if the family has none)."""
        for p in cls.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @classmethod
    def design_names(cls) -> tuple[str, ...]:
        """Names of the design hyperparameters: they change the features (tau, kappa, ...)."""
        return tuple(p.name for p in cls.params if p.kind == DESIGN)

    @classmethod
    def mixing_names(cls) -> tuple[str, ...]:
        """Names of the mixing hyperparameters: they only rescale features (eps, gamma, ...)."""
        return tuple(p.name for p in cls.params if p.kind == MIXING)

    @abstractmethod
    def features(self, rows: RowTensors, design: Mapping[str, float]) -> Any:
        """Everything the family needs from the rows for these design values (cache on rows)."""

    @abstractmethod
    def training_problem(self, feats: Any, y: np.ndarray, mixing: Mapping[str, float]) -> LinearAttentionProblem | None:
        """The problem whose solution is theta; None when nothing is trainable (e.g. eps = 0)."""

    @abstractmethod
    def predict(self, feats: Any, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        """Predictions for the rows behind ``feats`` with trained theta (None if untrained)."""

    def fitted_attributes(
        self, feats: Any, mixing: Mapping[str, float], theta: np.ndarray | None
    ) -> dict[str, np.ndarray]:
        """Named views of theta for the estimator (``w_`` etc.)."""
        return {}


def uniform(T: int) -> np.ndarray:
    """The weights 1/T of T trees (the untrained forest's average)."""
    return np.full(T, 1.0 / T)
