"""Fitting a config's base ensemble: the one place the engine turns a ``Base`` (a kind and its
parameters, as the config declares them) into a fitted forest.

The config object only says which forest; fitting it is the engine's work (a unit's stages in
``protocol``, the shared forests of ``shared_work``). Callers reach this function through the
module (``forest_fit.fit_forest``), so ``afr bench steps`` can time every fit by patching it once.
"""

from __future__ import annotations

import numpy as np

from afr_cli.config.experiment import Base
from afr_cli.ensembles import FittedEnsemble


def fit_forest(base: Base, X: np.ndarray, y: np.ndarray, seed: int | None) -> FittedEnsemble:
    """The base's ensemble fitted on (X, y) with ``seed`` and the base's own parameters."""
    return base.ensemble.fit(X, y, seed, **base.params)
