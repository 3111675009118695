"""The base ensemble's own prediction (RF, ERT, GBM, ...): no attention, nothing trained."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from afr_cli.features import RowTensors
from afr_cli.ensembles import AVERAGE, BOOSTED
from afr_cli.models.base import Family


class ForestFamily(Family):
    name = "forest"
    summary = "the base ensemble itself (RF, ERT, GBM, ...): the tables' baseline column"
    params = ()
    structures = (AVERAGE, BOOSTED)

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> np.ndarray:
        return rows.memo(("forest-predict",), lambda: rows.stats.ensemble.predict(rows.X))

    def training_problem(self, feats, y, mixing):
        return None

    def predict(self, feats: np.ndarray, mixing, theta) -> np.ndarray:
        return feats
