"""The base ensemble's own prediction (RF, ERT, GBM, ...): no attention, nothing trained."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from afr_cli.ensembles import AVERAGE, BOOSTED
from afr_cli.ensembles.leaf_statistics import RowTensors
from afr_cli.models.base import Family


class ForestFamily(Family):
    name = "forest"
    summary = "the base ensemble itself (RF, ERT, GBM, ...): the tables' baseline column"
    params = ()
    structures = (AVERAGE, BOOSTED)

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> RowTensors:
        """The rows themselves: the ensemble predicts them only when a prediction is asked for
        (nothing is trained, so the training rows' predictions were never used)."""
        return rows

    def training_problem(self, feats, y, mixing):
        return None

    def predict(self, feats: RowTensors, mixing, theta) -> np.ndarray:
        return feats.memo(("forest-predict",), lambda: feats.stats.ensemble.predict(feats.X))
